// `gexec validate` and `gexec kernels`.
#include "gexec/app/commands.hpp"
#include "gexec/io/load.hpp"
#include "gexec/kernels/table.hpp"

namespace gexec {

Exit validate_command(const std::vector<std::string>& files, std::ostream& out, std::ostream& err) {
  Exit status = Exit::ok;
  for (const std::string& f : files) {
    auto g = load_graph_file(f);
    if (!g) {
      err << g.error().message << "\n";
      status = Exit::bad_input;
      continue;
    }
    out << f << ": ok (" << g->tensors.size() << " tensors, " << g->ops.size() << " ops)\n";
  }
  return status;
}

Exit kernels_command(std::ostream& out) {
  out << print_kernel_table();
  return Exit::ok;
}

}  // namespace gexec
