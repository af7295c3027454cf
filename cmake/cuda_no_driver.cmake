# No gexec binary may need the GPU driver to start: --version, --dry-run and the CPU backend run
# where none is installed. FindCUDAToolkit makes CUDA::nvrtc depend on CUDA::cuda_driver, the
# driver's link stub (stubs/libcuda.so, SONAME libcuda.so.1), though gexec calls no driver API
# (NVRTC's cubins load through the runtime's cudaLibraryLoadData; libcudart finds the driver at
# run time). Where the link keeps every library named (a Debug build on a toolchain that does not
# link --as-needed by default, and any sanitizer build, for which GCC drops --as-needed), the
# stub's SONAME was NEEDED and the binary could not start without a driver. The dependency is
# removed here, and by the installed package's config for its users (gexecConfig.cmake.in);
# tests/no_driver_needed.sh checks every binary of a build.
macro(gexec_unlink_cuda_driver)
  if(TARGET CUDA::nvrtc)
    get_target_property(_gexec_nvrtc_deps CUDA::nvrtc INTERFACE_LINK_LIBRARIES)
    if(_gexec_nvrtc_deps)
      list(REMOVE_ITEM _gexec_nvrtc_deps CUDA::cuda_driver)
      set_property(TARGET CUDA::nvrtc PROPERTY INTERFACE_LINK_LIBRARIES "${_gexec_nvrtc_deps}")
    endif()
  endif()
endmacro()
