# Writes build_info.cpp at build time (cmake -P), so that `gexec --version` names the commit that
# was built, not the one that was configured. The file is rewritten only when its text changes,
# so an unchanged tree recompiles nothing.
#   -DSOURCE_DIR -DTEMPLATE -DOUTPUT and the configure-time values named in cmake/build_info.cpp.in
set(GEXEC_GIT_COMMIT "unknown")
set(GEXEC_GIT_DIRTY "false")
find_package(Git QUIET)
if(GIT_FOUND)
  execute_process(COMMAND ${GIT_EXECUTABLE} -C ${SOURCE_DIR} rev-parse --short=12 HEAD
                  OUTPUT_VARIABLE commit RESULT_VARIABLE rc OUTPUT_STRIP_TRAILING_WHITESPACE ERROR_QUIET)
  if(rc EQUAL 0)
    set(GEXEC_GIT_COMMIT "${commit}")
    execute_process(COMMAND ${GIT_EXECUTABLE} -C ${SOURCE_DIR} status --porcelain --untracked-files=no
                    OUTPUT_VARIABLE changes OUTPUT_STRIP_TRAILING_WHITESPACE ERROR_QUIET)
    if(changes)
      set(GEXEC_GIT_DIRTY "true")
    endif()
  endif()
endif()
configure_file(${TEMPLATE} ${OUTPUT}.tmp @ONLY)
file(COPY_FILE ${OUTPUT}.tmp ${OUTPUT} ONLY_IF_DIFFERENT)
file(REMOVE ${OUTPUT}.tmp)
