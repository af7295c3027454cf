// The GPU tests' main: without a CUDA device it says so and exits 77, which ctest shows as skipped.
#define CATCH_CONFIG_RUNNER
#include "catch.hpp"

#include <cstdio>
#include <string>

#include "gexec/backends/cuda_device.hpp"

int main(int argc, char** argv) {
  std::string why;
  if (gexec::cuda_device_count(&why) == 0) {
    std::printf("skipped: no CUDA device (%s)\n", why.c_str());
    return 77;
  }
  return Catch::Session().run(argc, argv);
}
