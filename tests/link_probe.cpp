// A program that links gexec's libraries as gexec does, but with --no-as-needed (tests/CMakeLists.txt):
// every library of the link interface becomes NEEDED, whether this toolchain drops unused ones
// or not, so tests/no_driver_needed.sh sees what the interface itself brings.
#include <iostream>

#include "gexec/app/version.hpp"

int main() {
  std::cout << gexec::version_text() << "\n";
  return 0;
}
