// Loading and checking graph files (graph-format.md, version 1), and saving graphs back.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "gexec/ir/graph.hpp"
#include "gexec/status.hpp"

namespace gexec {

constexpr int kGraphFormatVersion = 1;
constexpr size_t kMaxProblems = 50;  // problems reported per file before "... and N more"

// Loads and checks a graph file. On failure the Error is bad_input and its message holds one
// line per problem, "FILE: /json/pointer: what is wrong", at most kMaxProblems of them.
Result<Graph> load_graph_file(const std::string& path);

// The same from text; `display_name` prefixes problems and names the default graph name,
// `base_dir` resolves `init.file` paths.
Result<Graph> load_graph_text(std::string_view text, const std::string& display_name,
                              const std::string& base_dir);

// A graph file that loads back to an equal Graph (file inits keep their path).
std::string save_graph(const Graph& g);
// Written atomically (io/file.hpp). Relative init.file paths, relative to `from_dir` (the folder
// of the file the graph came from), are rewritten relative to the folder of `path`, so that
// the new file loads from wherever it is written.
Status save_graph_file(const Graph& g, const std::string& path, const std::string& from_dir = {});

}  // namespace gexec
