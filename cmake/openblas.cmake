# Finds OpenBLAS for the CPU backend, or stops the configure step with the line that fixes it.
# OpenBLAS itself, not any BLAS: the image's reference BLAS (libblas-dev) has a cblas.h as well, and
# the backend needs OpenBLAS's threads and openblas_get_config(). Sets GEXEC_OPENBLAS_INCLUDE.
if(EXISTS /opt/OpenBLAS)  # OpenBLAS's own `make install` prefix
  list(APPEND CMAKE_PREFIX_PATH /opt/OpenBLAS)
endif()
set(BLA_VENDOR OpenBLAS)
find_package(BLAS)
if(BLAS_FOUND)
  # Where OpenBLAS's own headers are: next to openblas_config.h (Debian puts them in a
  # per-variant folder, a source build in include/ or include/openblas).
  get_filename_component(_blas_dir "${BLAS_LIBRARIES}" DIRECTORY)
  find_path(GEXEC_OPENBLAS_INCLUDE openblas_config.h
    HINTS ${_blas_dir}/../include ${_blas_dir}/../../include
    PATH_SUFFIXES openblas
      ${CMAKE_LIBRARY_ARCHITECTURE}/openblas-pthread ${CMAKE_LIBRARY_ARCHITECTURE}/openblas-openmp
      ${CMAKE_LIBRARY_ARCHITECTURE}/openblas-serial ${CMAKE_LIBRARY_ARCHITECTURE}/openblas64-pthread)
endif()
if(NOT BLAS_FOUND OR NOT GEXEC_OPENBLAS_INCLUDE)
  if(NOT BLAS_FOUND)
    set(_what "no OpenBLAS library was found")
  else()
    set(_what "OpenBLAS's library (${BLAS_LIBRARIES}) was found but not its headers (openblas_config.h, cblas.h)")
  endif()
  # Indented lines keep their breaks in CMake's message layout.
  message(FATAL_ERROR "gexec: ${_what}; the CPU backend needs it. Install it with\n"
    "   sudo apt-get install libopenblas-dev\n"
    "   (or: bash scripts/setup.sh), or point CMAKE_PREFIX_PATH at an OpenBLAS installation,\n"
    "   or build without the CPU backend: -DGEXEC_CPU=OFF")
endif()
