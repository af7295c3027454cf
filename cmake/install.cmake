# Installing gexec: the command (with a RUNPATH to the CUDA libraries it was built with, so that
# it runs without /usr/local/cuda in the loader's path), its man page and bash completion, the
# documentation and the example graphs, and a relocatable CMake package (find_package(gexec):
# gexec::core, gexec::app and the backends gexec::cuda, gexec::cpu, with the headers) for programs
# that load and run graphs through the library. CPack makes a .deb of all of it.
include(CMakePackageConfigHelpers)

if(GEXEC_CUDA)
  set(_runpath "${CUDAToolkit_LIBRARY_DIR}")
  # NCCL where it was found (the nvidia-nccl Python package keeps it outside the toolkit).
  if(GEXEC_NCCL)
    get_filename_component(_nccl_dir "${GEXEC_NCCL_LIBRARY}" DIRECTORY)
    list(APPEND _runpath "${_nccl_dir}")
  endif()
  set_target_properties(gexec PROPERTIES INSTALL_RPATH "${_runpath}")
endif()
# RUNPATH rather than the old RPATH, so that LD_LIBRARY_PATH can still override it.
target_link_options(gexec PRIVATE "LINKER:--enable-new-dtags")
install(TARGETS gexec RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR})

# The man page, from `gexec --help` (with docs/gexec.h2m's sections), where help2man is present.
find_program(GEXEC_HELP2MAN help2man)
if(GEXEC_HELP2MAN)
  set(GEXEC_MAN_PAGE ON)
  # The static sections of docs/gexec.h2m, then the options of `gexec run --help` as they are.
  set(_h2m ${CMAKE_CURRENT_BINARY_DIR}/gexec.h2m)
  add_custom_command(OUTPUT ${CMAKE_CURRENT_BINARY_DIR}/gexec.1
    COMMAND bash ${CMAKE_CURRENT_SOURCE_DIR}/cmake/man_include.sh $<TARGET_FILE:gexec>
            ${CMAKE_CURRENT_SOURCE_DIR}/docs/gexec.h2m ${_h2m}
    COMMAND ${GEXEC_HELP2MAN} --no-info --version-string=${PROJECT_VERSION}
            "--name=run and check graphs of GEMM and elementwise ops on NVIDIA GPUs or the CPU"
            --include=${_h2m} --output=${CMAKE_CURRENT_BINARY_DIR}/gexec.1 $<TARGET_FILE:gexec>
    DEPENDS gexec ${CMAKE_CURRENT_SOURCE_DIR}/docs/gexec.h2m ${CMAKE_CURRENT_SOURCE_DIR}/cmake/man_include.sh
    COMMENT "Generating the man page gexec.1"
    VERBATIM)
  add_custom_target(gexec_man ALL DEPENDS ${CMAKE_CURRENT_BINARY_DIR}/gexec.1)
  install(FILES ${CMAKE_CURRENT_BINARY_DIR}/gexec.1 DESTINATION ${CMAKE_INSTALL_MANDIR}/man1)
else()
  set(GEXEC_MAN_PAGE OFF)
endif()

install(FILES scripts/completion/gexec.bash DESTINATION ${CMAKE_INSTALL_DATADIR}/bash-completion/completions
        RENAME gexec)
install(FILES README.md docs/graph-format.md docs/graph.schema.json docs/onnx.md docs/distributed.md docs/report-schema.md docs/report.schema.json
              docs/performance.md docs/performance.png
        DESTINATION ${CMAKE_INSTALL_DOCDIR})
install(DIRECTORY graphs/ DESTINATION ${CMAKE_INSTALL_DATADIR}/gexec/graphs FILES_MATCHING PATTERN "*.json")

# The libraries and their headers, as the CMake package gexec.
set(GEXEC_EXPORTED gexec_core gexec_app)
set_target_properties(gexec_core PROPERTIES EXPORT_NAME core)
set_target_properties(gexec_app PROPERTIES EXPORT_NAME app)
if(GEXEC_CUDA)
  list(APPEND GEXEC_EXPORTED gexec_cuda)
  set_target_properties(gexec_cuda PROPERTIES EXPORT_NAME cuda)
endif()
if(GEXEC_ONNX)
  list(APPEND GEXEC_EXPORTED gexec_onnx)
  set_target_properties(gexec_onnx PROPERTIES EXPORT_NAME onnx)
endif()
if(GEXEC_CPU)
  list(APPEND GEXEC_EXPORTED gexec_cpu)
  set_target_properties(gexec_cpu PROPERTIES EXPORT_NAME cpu)
endif()
install(TARGETS ${GEXEC_EXPORTED} EXPORT gexecTargets
        ARCHIVE DESTINATION ${CMAKE_INSTALL_LIBDIR}
        INCLUDES DESTINATION ${CMAKE_INSTALL_INCLUDEDIR})
install(DIRECTORY include/gexec DESTINATION ${CMAKE_INSTALL_INCLUDEDIR})
set(GEXEC_CMAKE_DIR ${CMAKE_INSTALL_LIBDIR}/cmake/gexec)
install(EXPORT gexecTargets NAMESPACE gexec:: DESTINATION ${GEXEC_CMAKE_DIR})
configure_package_config_file(cmake/gexecConfig.cmake.in ${CMAKE_CURRENT_BINARY_DIR}/gexecConfig.cmake
                              INSTALL_DESTINATION ${GEXEC_CMAKE_DIR})
write_basic_package_version_file(${CMAKE_CURRENT_BINARY_DIR}/gexecConfigVersion.cmake
                                 COMPATIBILITY SameMinorVersion)
install(FILES ${CMAKE_CURRENT_BINARY_DIR}/gexecConfig.cmake ${CMAKE_CURRENT_BINARY_DIR}/gexecConfigVersion.cmake
              cmake/cuda_no_driver.cmake
        DESTINATION ${GEXEC_CMAKE_DIR})

# The .deb (cpack -G DEB in the build folder): its dependencies are the Debian packages that own
# the shared libraries gexec links, found with dpkg-query; the CUDA libraries come from the CUDA
# toolkit under /usr/local/cuda, which no Debian package of this machine provides.
function(gexec_deb_package_of lib out)
  set(${out} "" PARENT_SCOPE)
  find_program(GEXEC_DPKG_QUERY dpkg-query)
  if(NOT GEXEC_DPKG_QUERY OR NOT EXISTS "${lib}")
    return()
  endif()
  file(REAL_PATH "${lib}" real)
  string(REGEX REPLACE "^/usr/lib/" "/lib/" alt "${real}")
  if(alt STREQUAL real)
    string(REGEX REPLACE "^/lib/" "/usr/lib/" alt "${real}")
  endif()
  foreach(path IN ITEMS "${real}" "${alt}")
    execute_process(COMMAND ${GEXEC_DPKG_QUERY} -S "${path}" OUTPUT_VARIABLE owner RESULT_VARIABLE rc ERROR_QUIET)
    if(rc EQUAL 0)
      string(REGEX REPLACE "^([^:, ]+).*" "\\1" owner "${owner}")
      set(${out} "${owner}" PARENT_SCOPE)
      return()
    endif()
  endforeach()
endfunction()

set(_deps libc6 libstdc++6 libgcc-s1)
set(_libs "")
foreach(t spdlog::spdlog fmt::fmt)
  if(TARGET ${t})
    get_target_property(_loc ${t} LOCATION)
    list(APPEND _libs "${_loc}")
  endif()
endforeach()
if(GEXEC_CPU)
  list(APPEND _libs ${BLAS_LIBRARIES})
endif()
foreach(lib IN LISTS _libs)
  gexec_deb_package_of("${lib}" _pkg)
  if(_pkg)
    list(APPEND _deps ${_pkg})
  else()
    message(STATUS "gexec: no Debian package owns ${lib}; the .deb does not declare it")
  endif()
endforeach()
list(REMOVE_DUPLICATES _deps)
list(JOIN _deps ", " GEXEC_DEB_DEPENDS)

set(CPACK_GENERATOR DEB)
set(CPACK_PACKAGE_NAME gexec)
set(CPACK_PACKAGE_VENDOR "gexec")
set(CPACK_PACKAGE_CONTACT "gexec maintainers <gexec@example.org>")
set(CPACK_PACKAGE_DESCRIPTION_SUMMARY "${PROJECT_DESCRIPTION}")
set(CPACK_PACKAGING_INSTALL_PREFIX /usr)
set(CPACK_DEBIAN_FILE_NAME DEB-DEFAULT)
set(CPACK_DEBIAN_PACKAGE_SECTION science)
set(CPACK_DEBIAN_PACKAGE_DEPENDS "${GEXEC_DEB_DEPENDS}")
# The CMake package needs the headers of what the libraries use.
set(CPACK_DEBIAN_PACKAGE_SUGGESTS "nlohmann-json3-dev, libspdlog-dev, libopenblas-dev")
if(GEXEC_CUDA)
  set(CPACK_PACKAGE_DESCRIPTION "gexec loads a JSON graph, runs a pass pipeline, selects kernels, runs the graph on a GPU
(cuBLASLt) or the CPU (OpenBLAS) and checks every output against a CPU reference.
The CUDA backend uses the CUDA ${CUDAToolkit_VERSION_MAJOR} runtime and cuBLASLt from ${CUDAToolkit_LIBRARY_DIR}.")
endif()
include(CPack)
