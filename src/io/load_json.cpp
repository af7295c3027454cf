// JSON-level helpers of the graph loader: strict parsing with line:column errors, typed readers, messages.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <limits>
#include <unordered_set>

#include "gexec/io/load.hpp"
#include "gexec/io/text.hpp"
#include "load_context.hpp"

namespace gexec::load_detail {

namespace {

constexpr int kMaxDepth = 64;

// Line and 1-based column of byte `pos` of the text.
std::pair<size_t, size_t> line_col(std::string_view text, size_t pos) {
  pos = std::min(pos, text.size());
  size_t line = 1, line_start = 0;
  for (size_t i = 0; i < pos; ++i)
    if (text[i] == '\n') ++line, line_start = i + 1;
  return {line, pos - line_start + 1};
}

// nlohmann's parser keeps its own stack, but the tree it builds is walked recursively
// afterwards; refusing deep nesting first keeps every later step safe.
std::optional<size_t> too_deep_at(std::string_view text) {
  int depth = 0;
  bool in_string = false, escaped = false;
  for (size_t i = 0; i < text.size(); ++i) {
    const char c = text[i];
    if (in_string) {
      if (escaped) escaped = false;
      else if (c == '\\') escaped = true;
      else if (c == '"') in_string = false;
    } else if (c == '"') {
      in_string = true;
    } else if (c == '[' || c == '{') {
      if (++depth > kMaxDepth) return i;
    } else if (c == ']' || c == '}') {
      --depth;
    }
  }
  return std::nullopt;
}

// A SAX pass that finds what the tree parser accepts silently: a key repeated in one object.
// It tracks the JSON pointer of the current value to say where.
class DuplicateKeyFinder : public nlohmann::json_sax<json> {
 public:
  explicit DuplicateKeyFinder(Problems& p) : p_(p) {}
  size_t error_pos = 0;
  std::string error_message;
  bool failed = false;

  bool null() override { return value(); }
  bool boolean(bool) override { return value(); }
  bool number_integer(number_integer_t) override { return value(); }
  bool number_unsigned(number_unsigned_t) override { return value(); }
  bool number_float(number_float_t, const string_t&) override { return value(); }
  bool string(string_t&) override { return value(); }
  bool binary(binary_t&) override { return value(); }
  bool start_object(std::size_t) override {
    value();
    frames_.push_back({true, -1, {}, {}});
    return true;
  }
  bool key(string_t& k) override {
    Frame& f = frames_.back();
    f.key = k;
    if (!f.keys.insert(k).second) p_.add(pointer(), "key " + quote(k) + " appears twice in one object");
    return true;
  }
  bool end_object() override { return pop(); }
  bool start_array(std::size_t) override {
    value();
    frames_.push_back({false, -1, {}, {}});
    return true;
  }
  bool end_array() override { return pop(); }
  bool parse_error(std::size_t position, const std::string&, const nlohmann::detail::exception& ex) override {
    // The position counts the characters read, so the parser stopped at the one before it.
    failed = true;
    error_pos = position > 0 ? position - 1 : 0;
    error_message = ex.what();
    return false;
  }

 private:
  struct Frame {
    bool object;
    long index;
    std::string key;
    std::unordered_set<std::string> keys;
  };
  bool value() {
    if (!frames_.empty() && !frames_.back().object) ++frames_.back().index;
    return true;
  }
  bool pop() {
    frames_.pop_back();
    return true;
  }
  std::string pointer() const {
    std::string s;
    for (const Frame& f : frames_) s = f.object ? ptr_key(s, f.key) : ptr_index(s, size_t(f.index));
    return s;
  }
  Problems& p_;
  std::vector<Frame> frames_;
};

// "[json.exception.parse_error.101] parse error at line 1, column 2: syntax error ..." -> "syntax error ..."
// The text it quotes may hold any bytes of the file; those that are not printable ASCII
// become '?', so that the message stays one readable line.
// The token it quotes ("last read: '...'") can be megabytes (a 10 MB number): it is shortened.
std::string syntax_message(const std::string& what) {
  size_t at = what.find("column ");
  if (at != std::string::npos) at = what.find(": ", at);
  if (at == std::string::npos) at = what.find("] ");
  std::string msg = at == std::string::npos ? what : what.substr(at + 2);
  const std::string marker = "last read: '";
  if (const size_t lr = msg.find(marker); lr != std::string::npos) {
    const size_t from = lr + marker.size();
    const size_t to = msg.rfind('\'');
    if (to != std::string::npos && to >= from) {
      const std::string token = msg.substr(from, to - from);
      msg = msg.substr(0, lr) + "last read: " + quote_text(token) + msg.substr(to + 1);
    }
  }
  for (char& c : msg)
    if (static_cast<unsigned char>(c) < 0x20 || static_cast<unsigned char>(c) >= 0x7f) c = '?';
  if (msg.size() > 240) msg = msg.substr(0, 240) + "...";
  return msg;
}

}  // namespace

void Problems::add(const std::string& pointer, const std::string& message) {
  ++total;
  if (lines.size() < kMaxProblems) lines.push_back(file + ": " + (pointer.empty() ? "/" : pointer) + ": " + message);
}

void Problems::add_at(size_t line, size_t col, const std::string& message) {
  ++total;
  if (lines.size() < kMaxProblems)
    lines.push_back(file + ":" + std::to_string(line) + ":" + std::to_string(col) + ": " + message);
}

Error Problems::error() const {
  std::string msg;
  for (size_t i = 0; i < lines.size(); ++i) msg += (i ? "\n" : "") + lines[i];
  if (total > lines.size()) msg += "\n... and " + std::to_string(total - lines.size()) + " more problems";
  return bad_input(msg);
}

bool parse_json(std::string_view text, Problems& p, json* out) {
  if (text.find_first_not_of(" \t\r\n") == std::string_view::npos) {
    p.add_at(1, 1, "JSON syntax error: the file is empty");
    return false;
  }
  // nlohmann's lexer takes a NUL byte for the end of the input, which would let anything after
  // it through; JSON text holds no raw NUL anywhere (not even inside a string).
  if (const size_t nul = text.find('\0'); nul != std::string_view::npos) {
    auto [line, col] = line_col(text, nul);
    p.add_at(line, col, "JSON syntax error: a NUL byte; JSON text holds none, and only whitespace may follow the "
                        "top-level value");
    return false;
  }
  if (auto deep = too_deep_at(text)) {
    auto [line, col] = line_col(text, *deep);
    p.add_at(line, col, "JSON nesting deeper than " + std::to_string(kMaxDepth) + " levels");
    return false;
  }
  DuplicateKeyFinder finder(p);
  json::sax_parse(text, &finder);
  if (finder.failed) {
    auto [line, col] = line_col(text, finder.error_pos);
    p.add_at(line, col, "JSON syntax error: " + syntax_message(finder.error_message));
    return false;
  }
  *out = json::parse(text, nullptr, false);
  return !out->is_discarded();  // repeated keys are problems, but the rest is still checked
}

// A pointer is shown inside a one-line problem: control characters in a key are escaped and a
// very long key is shortened, as quote() does for values.
// Bytes that are not UTF-8 are escaped (printable()), and the cut falls between characters.
std::string ptr_key(const std::string& base, std::string_view key) {
  constexpr size_t kMax = 64;
  size_t cut = std::min(key.size(), kMax);
  while (cut > 0 && cut < key.size() && (static_cast<unsigned char>(key[cut]) & 0xc0) == 0x80) --cut;
  std::string escaped;
  for (size_t i = 0; i < cut; ++i) {
    const char c = key[i];
    if (c == '~') escaped += "~0";
    else if (c == '/') escaped += "~1";
    else escaped += c;
  }
  std::string s = base + "/" + printable(escaped);
  if (cut < key.size()) s += "...";
  return s;
}

std::string ptr_index(const std::string& base, size_t i) { return base + "/" + std::to_string(i); }

std::string quote(std::string_view s) { return quote_text(s, 64); }

std::string describe(const json& v) {
  switch (v.type()) {
    case json::value_t::string: return "string " + quote(v.get_ref<const std::string&>());
    case json::value_t::number_integer:
    case json::value_t::number_unsigned:
    case json::value_t::number_float: {
      // A number of megabytes of digits is quoted like a long string.
      const std::string text = v.dump();
      return "number " + (text.size() > kQuoteChars ? text.substr(0, kQuoteChars) + "..." : text);
    }
    case json::value_t::boolean: return v.get<bool>() ? "true" : "false";
    case json::value_t::null: return "null";
    case json::value_t::array: return "an array";
    case json::value_t::object: return "an object";
    default: return "a value of another kind";
  }
}

std::string join(std::initializer_list<std::string_view> items) {
  std::string s;
  for (std::string_view it : items) s += (s.empty() ? "" : ", ") + std::string(it);
  return s;
}

void check_keys(Problems& p, const json& obj, const std::string& ptr, std::initializer_list<std::string_view> allowed) {
  for (auto it = obj.begin(); it != obj.end(); ++it) {
    bool known = false;
    for (std::string_view a : allowed) known = known || it.key() == a;
    if (!known) p.add(ptr_key(ptr, it.key()), "unknown key " + quote(it.key()) + "; expected one of " + join(allowed));
  }
}

const json* optional_key(const json& obj, std::string_view key) {
  auto it = obj.find(key);
  return it == obj.end() ? nullptr : &*it;
}

const json* require(Problems& p, const json& obj, const std::string& ptr, std::string_view key) {
  const json* v = optional_key(obj, key);
  if (!v) p.add(ptr_key(ptr, key), "required key " + quote(key) + " is missing");
  return v;
}

std::optional<std::string> get_string(Problems& p, const json& v, const std::string& ptr) {
  if (v.is_string()) return v.get<std::string>();
  p.add(ptr, "expected a string, found " + describe(v));
  return std::nullopt;
}

std::optional<bool> get_bool(Problems& p, const json& v, const std::string& ptr) {
  if (v.is_boolean()) return v.get<bool>();
  p.add(ptr, "expected true or false, found " + describe(v));
  return std::nullopt;
}

std::optional<double> get_number(Problems& p, const json& v, const std::string& ptr) {
  if (v.is_number()) {
    const double d = v.get<double>();
    if (std::isfinite(d)) return d;
    p.add(ptr, "expected a finite number, found " + describe(v));
    return std::nullopt;
  }
  p.add(ptr, "expected a number, found " + describe(v));
  return std::nullopt;
}

std::optional<int64_t> get_positive_int(Problems& p, const json& v, const std::string& ptr) {
  constexpr int64_t kMax = std::numeric_limits<int64_t>::max();
  if (v.is_number_unsigned()) {
    const uint64_t u = v.get<uint64_t>();
    if (u > 0 && u <= uint64_t(kMax)) return int64_t(u);
    if (u > uint64_t(kMax)) {
      p.add(ptr, "expected a positive integer of at most " + std::to_string(kMax) + ", found " + describe(v));
      return std::nullopt;
    }
  } else if (v.is_number_integer() && v.get<int64_t>() > 0) {
    return v.get<int64_t>();
  }
  p.add(ptr, "expected a positive integer, found " + describe(v));
  return std::nullopt;
}

bool check_name(Problems& p, const std::string& name, const std::string& ptr) {
  if (name.empty()) {
    p.add(ptr, "a name must not be empty");
    return false;
  }
  bool ok = !(name[0] >= '0' && name[0] <= '9');
  for (char c : name)
    ok = ok && ((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_' ||
                c == '.' || c == '-' || c == ':');
  if (!ok)
    p.add(ptr, "bad name " + quote(name) + ": names use letters, digits, _ . - : and do not start with a digit");
  return ok;
}

}  // namespace gexec::load_detail
