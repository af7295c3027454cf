# NCCL for the collectives of a sharded run on CUDA (--tp N, docs/distributed.md): the CUDA
# toolkit's copy (Debian's image has it under /usr/local/cuda), or the `nvidia-nccl` Python
# package's (the GPU machine's: its library is libnccl.so.2, with no unversioned link). Where
# none is found the build goes on without it, says so in the summary, and a sharded run on CUDA
# says why it cannot run (the CPU ranks of --tp need no NCCL). GEXEC_NCCL_ROOT points elsewhere.
set(GEXEC_NCCL OFF)
set(GEXEC_NCCL_WHY "")
if(GEXEC_CUDA)
  set(_nccl_hints ${GEXEC_NCCL_ROOT} ${CUDAToolkit_LIBRARY_ROOT} ${CUDAToolkit_TARGET_DIR})
  # A python3 of its own: find_package(Python3) here would fix the interpreter that the Python
  # module's configure (python/CMakeLists.txt) chooses later.
  find_program(GEXEC_NCCL_PYTHON NAMES python3)
  if(GEXEC_NCCL_PYTHON)
    execute_process(
      COMMAND ${GEXEC_NCCL_PYTHON} -c "import nvidia.nccl, os; print(list(nvidia.nccl.__path__)[0])"
      OUTPUT_VARIABLE _nccl_py OUTPUT_STRIP_TRAILING_WHITESPACE ERROR_QUIET RESULT_VARIABLE _nccl_py_rc)
    if(_nccl_py_rc EQUAL 0 AND _nccl_py)
      list(APPEND _nccl_hints ${_nccl_py})
    endif()
  endif()
  find_path(GEXEC_NCCL_INCLUDE_DIR nccl.h HINTS ${_nccl_hints} ${CUDAToolkit_INCLUDE_DIRS} PATH_SUFFIXES include)
  find_library(GEXEC_NCCL_LIBRARY NAMES nccl libnccl.so.2 HINTS ${_nccl_hints} ${CUDAToolkit_LIBRARY_DIR}
               PATH_SUFFIXES lib lib64)
  if(GEXEC_NCCL_INCLUDE_DIR AND GEXEC_NCCL_LIBRARY)
    set(GEXEC_NCCL ON)
  else()
    set(GEXEC_NCCL_WHY "no nccl.h and libnccl found (CUDA toolkit, the nvidia-nccl Python package, GEXEC_NCCL_ROOT)")
  endif()
else()
  set(GEXEC_NCCL_WHY "no CUDA backend")
endif()
