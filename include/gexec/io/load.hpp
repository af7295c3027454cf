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
Status save_graph_file(const Graph& g, const std::string& path);

}  // namespace gexec
