// Shared state and helpers of the graph loader (load.cpp, load_json.cpp, load_tensors.cpp, load_ops.cpp).
#pragma once

#include <initializer_list>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include <nlohmann/json.hpp>

#include "gexec/ir/graph.hpp"
#include "gexec/status.hpp"

namespace gexec::load_detail {

using nlohmann::json;

// The problems of one load, each "FILE: /pointer: message", at most kMaxProblems kept.
struct Problems {
  std::string file;
  std::vector<std::string> lines;
  size_t total = 0;
  void add(const std::string& pointer, const std::string& message);
  // A problem located by line and column rather than by pointer (JSON syntax).
  void add_at(size_t line, size_t col, const std::string& message);
  bool empty() const { return total == 0; }
  Error error() const;
};

// Parses the text into *out; syntax errors, duplicate keys and deep nesting become problems.
bool parse_json(std::string_view text, Problems& p, json* out);

// Pointer fragments.
std::string ptr_key(const std::string& base, std::string_view key);  // escapes ~ and /
std::string ptr_index(const std::string& base, size_t i);

// Text for messages.
std::string quote(std::string_view s);  // "s", escaped, long strings shortened
std::string describe(const json& v);    // e.g. `string "1"`, `number 1.5`, `an array`
std::string join(std::initializer_list<std::string_view> items);  // "a, b, c"

// Reports every key of `obj` that is not in `allowed`.
void check_keys(Problems& p, const json& obj, const std::string& ptr, std::initializer_list<std::string_view> allowed);
// Reports a missing required key; returns the value or nullptr.
const json* require(Problems& p, const json& obj, const std::string& ptr, std::string_view key);
const json* optional_key(const json& obj, std::string_view key);

// Typed readers: report "expected ..., found ..." at ptr and return nullopt on a mismatch.
std::optional<std::string> get_string(Problems& p, const json& v, const std::string& ptr);
std::optional<bool> get_bool(Problems& p, const json& v, const std::string& ptr);
std::optional<double> get_number(Problems& p, const json& v, const std::string& ptr);
std::optional<int64_t> get_positive_int(Problems& p, const json& v, const std::string& ptr);

// Letters, digits, _ . - :, not starting with a digit; reports at ptr when not.
bool check_name(Problems& p, const std::string& name, const std::string& ptr);

// What the loader knows while it walks the file.
struct LoadState {
  Problems& p;
  std::string base_dir;
  Graph g;
  std::unordered_map<std::string, TensorId> tensor_ids;
  std::vector<bool> tensor_ok;            // per tensor: name, shape, dtype and layout all valid
  std::vector<size_t> tensor_pos;         // per tensor: its index in /tensors
  std::vector<const json*> tensor_init;   // per tensor: its "init" value, if any
  std::vector<size_t> op_pos;             // per op of g.ops: its index in /ops
  std::vector<long> writer_pos;           // per tensor: the /ops index of its first writer, or -1
  std::vector<std::string> op_label;      // per /ops index: the op's name ("" when it has none)
  std::vector<std::string> scale_name;    // per tensor: S's name of a block scale, else ""
  // "op NAME (/ops/3)" for the op at /ops index i.
  std::string op_ref(long i) const {
    const std::string& n = op_label[size_t(i)];
    return (n.empty() ? std::string("the op") : "op " + n) + " (/ops/" + std::to_string(i) + ")";
  }
};

void load_tensors(LoadState& s, const json& tensors);  // fills g.tensors, not the inits
void load_ops(LoadState& s, const json& ops);          // fills g.ops with the well-formed ops
void load_inits(LoadState& s);                         // after load_ops: knows which tensors are written
// After load_inits: each block scale's S found by name; a CAST to a block-scaled tensor whose S
// has no other source writes S as its second output; S's shape, dtype and values checked.
void resolve_block_scales(LoadState& s);

}  // namespace gexec::load_detail
