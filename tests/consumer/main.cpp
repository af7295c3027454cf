// A program built against the installed gexec package: validates a graph and runs it through
// the library (on the CPU backend where the package has one, else as a dry-run).
//   consumer GRAPH
#include <iostream>

#include "gexec/app/commands.hpp"
#include "gexec/build_info.hpp"

int main(int argc, char** argv) {
  if (argc != 2) {
    std::cerr << "usage: consumer GRAPH\n";
    return 2;
  }
  std::cout << "consumer of gexec " << gexec::build_info().version << " (" << gexec::build_info().commit << ")\n";
  if (gexec::validate_command({argv[1]}, std::cout, std::cerr) != gexec::Exit::ok) return 1;
  gexec::RunOptions opts;
  opts.graph_path = argv[1];
#if GEXEC_HAVE_CPU
  opts.backend = "cpu";
#else
  opts.dry_run = true;
#endif
  return static_cast<int>(gexec::run_command(opts, std::cout, std::cerr));
}
