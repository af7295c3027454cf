// Output paths checked before the run: writable, distinct, and never one of the run's inputs.
#include "output_paths.hpp"

#include <limits.h>
#include <unistd.h>

#include <cerrno>
#include <filesystem>
#include <vector>

#include "dump.hpp"
#include "gexec/tune/tuning_cache.hpp"
#include "gexec/io/file.hpp"
#include "gexec/io/output_target.hpp"
#include "gexec/io/text.hpp"

namespace gexec {
namespace {

namespace fs = std::filesystem;

struct Named {
  std::string option;  // "--report", "the graph file", ...
  fs::path path;
};

Error refuse(const Named& out, const std::string& why) {
  return bad_input(out.option + ": " + path_text(out.path.string()) + ": " + why);
}

// The folder a file would be created in ("." for a bare name).
fs::path folder_of(const fs::path& p) { return p.parent_path().empty() ? fs::path(".") : p.parent_path(); }

Status check_folder_writable(const Named& out, const fs::path& dir) {
  std::error_code ec;
  const fs::file_status st = fs::status(dir, ec);
  if (!fs::exists(st)) return refuse(out, "its folder " + path_text(dir.string()) + " does not exist");
  if (!fs::is_directory(st)) return refuse(out, "its folder " + path_text(dir.string()) + " is not a folder");
  if (::access(dir.c_str(), W_OK | X_OK) != 0) {
    const int err = errno;
    return refuse(out, "cannot write in its folder " + path_text(dir.string()) + ": " + errno_text(err));
  }
  return {};
}

// A name longer than the file system takes (NAME_MAX, 255 bytes) or a path beyond PATH_MAX
// fails only when the file is opened, after the work: found here instead.
Status check_name_lengths(const Named& out, const fs::path& p) {
  for (const fs::path& part : p)
    if (part.native().size() > NAME_MAX)
      return refuse(out, "the name " + quote_text(part.native()) + " is " + std::to_string(part.native().size()) +
                             " bytes; a file or folder name is at most " + std::to_string(NAME_MAX) + " bytes");
  if (p.native().size() >= PATH_MAX)
    return refuse(out, "the path is " + std::to_string(p.native().size()) + " bytes; at most " +
                           std::to_string(PATH_MAX - 1));
  return {};
}

// A file output, followed through its links (gexec/io/output_target.hpp): nothing there yet or a
// regular file, in a folder that exists and is writable; or a FIFO, a character device or one of
// this process's descriptors, written in place.
Status check_file_output(const Named& out) {
  if (out.path.empty()) return bad_input(out.option + ": the path is empty");
  GEXEC_TRY(check_name_lengths(out, out.path));
  auto target = resolve_output(out.path.string());
  if (!target) return bad_input(out.option + ": " + target.error().message);
  if (target->kind != OutputTarget::Kind::file) return {};
  const fs::path real(target->path);
  GEXEC_TRY(check_name_lengths(out, real));
  return check_folder_writable(out, folder_of(real));
}

// The --dump folder: a folder, or nothing under a writable folder (it is then created).
Status check_dump_folder(const Named& out) {
  if (out.path.empty()) return bad_input(out.option + ": the path is empty");
  GEXEC_TRY(check_name_lengths(out, out.path));
  std::error_code ec;
  const fs::file_status st = fs::status(out.path, ec);
  if (fs::exists(st)) {
    if (!fs::is_directory(st)) return refuse(out, "exists and is not a folder");
    return check_folder_writable(out, out.path);
  }
  // The nearest folder that exists must let us create the rest.
  fs::path up = fs::absolute(out.path, ec).lexically_normal();
  while (!up.empty() && !fs::exists(up, ec) && up != up.root_path()) up = up.parent_path();
  return check_folder_writable(out, up.empty() ? fs::path(".") : up);
}

// Records which option was refused and passes the refusal on.
Status refused_by(std::string* refused, const std::string& option, Status s) {
  *refused = option;
  return s;
}

bool same_file(const fs::path& a, const fs::path& b) {
  std::error_code ec;
  const bool eq = fs::equivalent(a, b, ec);
  return !ec && eq;
}

// Where a file output lands, links followed, as an absolute path: two outputs that do not exist
// yet are the same file when they land on the same name.
fs::path landing(const fs::path& p) {
  auto t = resolve_output(p.string());
  std::error_code ec;
  const fs::path real = t && t->kind == OutputTarget::Kind::file ? fs::path(t->path) : p;
  return fs::absolute(real, ec).lexically_normal();
}

bool same_output(const fs::path& a, const fs::path& b) { return same_file(a, b) || landing(a) == landing(b); }

}  // namespace

Status check_run_paths(const RunOptions& opts, const Graph& original, std::string* refused,
                       const std::vector<std::pair<std::string, std::string>>& more_inputs) {
  // The run's inputs: what it reads and must not destroy.
  std::vector<Named> inputs{{"the graph file", opts.graph_path}};
  for (const auto& [what, path] : more_inputs) inputs.push_back({what, path});
  const fs::path graph_dir = fs::path(opts.graph_path).parent_path();
  for (const Tensor& t : original.tensors)
    if (t.init && t.init->kind == InitKind::file) {
      const fs::path p(t.init->file);
      inputs.push_back({"the init.file of tensor " + quote_text(t.name), p.is_relative() ? graph_dir / p : p});
    }
  if (!opts.load_inputs_dir.empty()) {
    const GraphIndex idx(original);
    for (size_t t = 0; t < original.tensors.size(); ++t)
      if (idx.is_input(TensorId(t)))
        inputs.push_back({"the --load-inputs file of " + quote_text(original.tensors[t].name),
                          fs::path(opts.load_inputs_dir) / tensor_file_name(original.tensors[t].name)});
  }
  // A gexec tuning cache is the run's own to rewrite; any other file is the user's.
  if (!opts.tuning_cache.empty() && !opts.force)
    if (Status s = check_tuning_cache_file(opts.tuning_cache); !s) return refused_by(refused, "--tuning-cache", s);

  // The run's outputs.
  std::vector<Named> outputs;
  // "-" is stdout, not a file.
  if (!opts.report_path.empty() && opts.report_path != "-") outputs.push_back({"--report", opts.report_path});
  if (!opts.emit_graph.empty()) outputs.push_back({"--emit-graph", opts.emit_graph});
  if (!opts.emit_gemms.empty()) outputs.push_back({"--emit-gemms", opts.emit_gemms});
  if (!opts.tuning_cache.empty() && !opts.dry_run) outputs.push_back({"--tuning-cache", opts.tuning_cache});
  // Only the report goes to stdout: a file named "-" in the current folder would surprise.
  for (const auto& [option, path] : {std::pair<const char*, const std::string&>{"--emit-graph", opts.emit_graph},
                                     {"--emit-gemms", opts.emit_gemms}, {"--tuning-cache", opts.tuning_cache},
                                     {"--dump", opts.dump_dir}})
    if (path == "-")
      return refused_by(refused, option, bad_input(std::string(option) + ": '-' (stdout) is taken by --report alone; "
                                                                           "name a file (./- for one called -)"));
  if (!opts.dump_dir.empty()) {
    const Named dir{"--dump", opts.dump_dir};
    if (Status s = check_dump_folder(dir); !s) return refused_by(refused, dir.option, s);
    // Created now rather than after the run: another output (the report) may go inside it.
    std::error_code ec;
    if (!opts.dry_run && !fs::create_directories(opts.dump_dir, ec) && ec)
      return refused_by(refused, dir.option, refuse(dir, "cannot create the folder: " + ec.message()));
  }
  for (const Named& out : outputs)
    if (Status s = check_file_output(out); !s) return refused_by(refused, out.option, s);
  if (!opts.dump_dir.empty()) {
    if (!opts.dry_run) {
      const GraphIndex idx(original);
      for (size_t t = 0; t < original.tensors.size(); ++t)
        if (idx.is_input(TensorId(t)) || idx.is_output[t]) {
          const Named f{"--dump", fs::path(opts.dump_dir) / tensor_file_name(original.tensors[t].name)};
          std::error_code ec;
          if (fs::exists(fs::symlink_status(f.path, ec)) || fs::exists(f.path, ec))
            if (Status s = check_file_output(f); !s) return refused_by(refused, f.option, s);
          outputs.push_back(f);
        }
    }
  }

  for (size_t i = 0; i < outputs.size(); ++i) {
    for (size_t j = 0; j < i; ++j)
      if (same_output(outputs[i].path, outputs[j].path)) {
        *refused = outputs[i].option + " " + outputs[j].option;
        return refuse(outputs[i], "is also the file of " + outputs[j].option + "; name two different files");
      }
    if (opts.force) continue;
    for (const Named& in : inputs)
      if (same_file(outputs[i].path, in.path))
        return refused_by(refused, outputs[i].option,
                          refuse(outputs[i], "is " + in.option +
                                                 " of this run; gexec does not overwrite its own inputs "
                                                 "(pass --force to allow it)"));
  }
  return {};
}

Status check_output_files(const std::vector<std::pair<std::string, std::string>>& outputs,
                          const std::vector<std::pair<std::string, std::string>>& inputs, bool force) {
  std::vector<Named> outs;
  for (const auto& [option, path] : outputs)
    if (!path.empty() && path != "-") outs.push_back({option, path});
  for (const Named& out : outs) GEXEC_TRY(check_file_output(out));
  for (size_t i = 0; i < outs.size(); ++i) {
    for (size_t j = 0; j < i; ++j)
      if (same_output(outs[i].path, outs[j].path))
        return refuse(outs[i], "is also the file of " + outs[j].option + "; name two different files");
  }
  return check_not_inputs(outputs, inputs, force);
}

Status check_not_inputs(const std::vector<std::pair<std::string, std::string>>& outputs,
                        const std::vector<std::pair<std::string, std::string>>& inputs, bool force) {
  if (force) return {};
  for (const auto& [option, path] : outputs) {
    if (path.empty() || path == "-") continue;
    for (const auto& [what, in] : inputs)
      if (same_file(path, in))
        return refuse({option, path}, "is " + what + " of this run; gexec does not overwrite its own inputs "
                                      "(pass --force to allow it)");
  }
  return {};
}

}  // namespace gexec
