# The build_info.cpp of gexec_core, regenerated on every build by cmake/build_info.cmake (so that
# the commit and "dirty" are those of the build, not of the configure step). Sets GEXEC_BUILD_INFO.
set(GEXEC_BUILD_INFO ${CMAKE_CURRENT_BINARY_DIR}/generated/build_info.cpp)
string(REPLACE ";" " " _archs "${CMAKE_CUDA_ARCHITECTURES}")
if(NOT GEXEC_CUDA)
  set(_archs "")
endif()
set(_cuda_compiler "")
if(GEXEC_CUDA)
  set(_cuda_compiler "${CMAKE_CUDA_COMPILER_ID} ${CMAKE_CUDA_COMPILER_VERSION}")
endif()
string(TOLOWER "${GEXEC_CUDA}" _have_cuda)
string(TOLOWER "${GEXEC_CPU}" _have_cpu)
if(_have_cuda)
  set(_have_cuda true)
else()
  set(_have_cuda false)
endif()
if(_have_cpu)
  set(_have_cpu true)
else()
  set(_have_cpu false)
endif()
add_custom_target(gexec_build_info
  COMMAND ${CMAKE_COMMAND}
    -DSOURCE_DIR=${CMAKE_CURRENT_SOURCE_DIR}
    -DTEMPLATE=${CMAKE_CURRENT_SOURCE_DIR}/cmake/build_info.cpp.in
    -DOUTPUT=${GEXEC_BUILD_INFO}
    -DVERSION=${PROJECT_VERSION}
    -DBUILD_TYPE=${CMAKE_BUILD_TYPE}
    "-DCXX_COMPILER=${CMAKE_CXX_COMPILER_ID} ${CMAKE_CXX_COMPILER_VERSION}"
    "-DCUDA_COMPILER=${_cuda_compiler}"
    -DHAVE_CUDA=${_have_cuda}
    -DHAVE_CPU=${_have_cpu}
    "-DCUDA_ARCHITECTURES=${_archs}"
    -P ${CMAKE_CURRENT_SOURCE_DIR}/cmake/build_info.cmake
  BYPRODUCTS ${GEXEC_BUILD_INFO}
  COMMENT "Reading the git commit for gexec --version"
  VERBATIM)
