// `gexec validate` and `gexec kernels`.
#include "gexec/app/commands.hpp"
#include "gexec/app/model_file.hpp"
#include "gexec/io/load.hpp"
#include "gexec/kernels/table.hpp"

namespace gexec {

Exit validate_command(const std::vector<std::string>& files, std::ostream& out, std::ostream& err,
                      const std::map<std::string, int64_t>& dims) {
  Exit status = Exit::ok;
  for (const std::string& f : files) {
    auto m = load_model_file(f, {dims, {}});
    if (!m) {
      err << m.error().message << "\n";
      status = Exit::bad_input;
      continue;
    }
    std::string ops;
    for (const std::string& o : m->op_types) ops += (ops.empty() ? "; ops " : ", ") + o;
    out << f << ": ok (" << m->graph.tensors.size() << " tensors, " << m->graph.ops.size() << " ops"
        << (m->description.empty() ? "" : "; " + m->description) << ops << ")\n";
    for (const std::string& p : m->patterns) out << "  " << p << "\n";
  }
  return status;
}

Exit kernels_command(std::ostream& out) {
  out << print_kernel_table();
  return Exit::ok;
}

}  // namespace gexec
