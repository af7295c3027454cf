// A results file read as SAX events (results_file.hpp): only the fields compare matches are
// kept, each point folded into its key and measure as soon as its object closes.
#include "results_file.hpp"

#include <array>
#include <cmath>
#include <map>
#include <optional>
#include <streambuf>

#include <nlohmann/json.hpp>

#include "gexec/io/file.hpp"
#include "gexec/io/text.hpp"
#include "json_report.hpp"

namespace gexec {
namespace {

using json = nlohmann::json;

constexpr size_t kMaxProblems = 10;
constexpr int kGemmVersion = 1;  // `gexec gemm --json`'s "version"

// One scalar value as the file gave it.
struct Scalar {
  enum class Kind { null, boolean, number, string, container } kind = Kind::null;
  double number = 0;
  bool integer = false;
  std::string text;
};

// The point fields compare reads; the rest of a point (power, percentiles, warnings) is skipped.
enum Field { m, n, k, batch, groups, routing, dtype, out_dtype, bias, act, trans, l2, backend, median_us, spread, cv,
             result, kFields };
constexpr std::array<const char*, kFields> kFieldNames = {
    "m", "n", "k", "batch", "groups", "routing", "dtype", "out_dtype", "bias",
    "act", "trans", "l2", "backend", "median_us", "spread", "cv", "result"};

std::optional<Field> field_of(const std::string& key) {
  for (size_t i = 0; i < kFields; ++i)
    if (key == kFieldNames[i]) return Field(i);
  return std::nullopt;
}

std::string scalar_text(const Scalar& s) {
  if (s.kind == Scalar::Kind::string) return s.text;
  if (s.kind == Scalar::Kind::number)  // whole numbers as such where int64_t holds them exactly
    return s.integer && std::fabs(s.number) < 9e15 ? std::to_string(int64_t(s.number)) : json(s.number).dump();
  return "";
}

struct Frame {
  bool array = false;
  std::string key;   // objects: the current member's key
  size_t index = 0;  // arrays: the current element's index
};

class Reader : public json::json_sax_t {
 public:
  explicit Reader(std::string path) : path_(std::move(path)) {}

  bool null() override { return value({}); }
  bool boolean(bool) override { return value({Scalar::Kind::boolean}); }
  bool number_integer(number_integer_t v) override { return value({Scalar::Kind::number, double(v), true}); }
  bool number_unsigned(number_unsigned_t v) override { return value({Scalar::Kind::number, double(v), true}); }
  bool number_float(number_float_t v, const string_t&) override { return value({Scalar::Kind::number, v, false}); }
  bool string(string_t& v) override {
    Scalar s{Scalar::Kind::string};
    s.text = std::move(v);
    return value(s);
  }
  bool binary(binary_t&) override { return value({Scalar::Kind::container}); }
  bool key(string_t& k) override {
    stack_.back().key = std::move(k);
    return true;
  }
  bool start_object(std::size_t) override { return open(false); }
  bool start_array(std::size_t) override { return open(true); }
  bool end_object() override { return close(); }
  bool end_array() override { return close(); }
  bool parse_error(std::size_t, const std::string&, const nlohmann::detail::exception& e) override {
    not_json_ = path_text(path_) + ": not JSON: " + e.what();
    return false;
  }

  Result<ResultsFile> finish();

 private:
  // The JSON pointer of the value being read, or of the container at `depth`.
  std::string pointer(size_t depth) const {
    std::string p;
    for (size_t i = 0; i < depth && i < stack_.size(); ++i) {
      if (stack_[i].array) {
        p += "/" + std::to_string(stack_[i].index);
        continue;
      }
      p += "/";
      for (char c : stack_[i].key) p += c == '~' ? std::string("~0") : c == '/' ? std::string("~1") : std::string(1, c);
    }
    return p;
  }
  void problem(const std::string& where, const std::string& what) {
    if (problems_.size() < kMaxProblems) problems_.push_back(path_text(path_) + ": " + where + ": " + what);
  }
  bool at(std::initializer_list<const char*> keys) const;  // the value's path: these keys ("#" any index)

  bool value(const Scalar& s) {
    take(s);
    done_value();
    return true;
  }
  bool open(bool array) {
    if (stack_.empty()) top_is_object_ = !array;
    else take({Scalar::Kind::container, 0, false, array ? "[" : "{"});
    if (!stack_.empty() && in_points_item()) point_.emplace(), point_at_ = pointer(stack_.size());
    if (at({"timing", "ops", "#"})) op_.emplace(), op_at_ = pointer(stack_.size());
    stack_.push_back({array, "", 0});
    return true;
  }
  bool close() {
    stack_.pop_back();
    if (!stack_.empty() && in_points_item() && point_) end_point();
    if (at({"timing", "ops", "#"}) && op_) end_op();
    done_value();
    return true;
  }
  // After a value, an array moves on to its next element.
  void done_value() {
    if (!stack_.empty() && stack_.back().array) ++stack_.back().index;
  }
  bool in_points_item() const { return at({"points", "#"}); }

  void take(const Scalar& s);
  void end_point();
  void end_op();

  std::string path_;
  std::vector<Frame> stack_;
  std::vector<std::string> problems_;
  std::string not_json_;
  bool top_is_object_ = false;
  std::optional<Scalar> format_, version_, result_, graph_name_, median_, p90_, cv_;
  bool points_seen_ = false, timing_seen_ = false;
  std::optional<std::array<std::optional<Scalar>, kFields>> point_;
  std::string point_at_;
  std::optional<std::pair<std::optional<Scalar>, std::optional<Scalar>>> op_;  // name, median_us
  std::string op_at_;
  std::vector<std::pair<std::string, Measure>> points_, ops_;
  std::map<std::string, std::string> point_keys_, op_keys_;  // key -> where it was first seen
};

bool Reader::at(std::initializer_list<const char*> keys) const {
  if (stack_.size() != keys.size()) return false;
  size_t i = 0;
  for (const char* k : keys) {
    const Frame& f = stack_[i++];
    if (std::string_view(k) == "#" ? !f.array : (f.array || f.key != k)) return false;
  }
  return true;
}

// A value (a scalar, or a container's start) lands where the stack says.
void Reader::take(const Scalar& s) {
  if (at({"format"})) format_ = s;
  else if (at({"version"})) version_ = s;
  else if (at({"result"})) result_ = s;
  else if (at({"graph", "name"})) graph_name_ = s;
  else if (at({"timing"})) timing_seen_ = s.text == "{";
  else if (at({"timing", "median_us"})) median_ = s;
  else if (at({"timing", "p90_us"})) p90_ = s;
  else if (at({"timing", "cv"})) cv_ = s;
  else if (at({"timing", "ops", "#", "name"}) && op_) op_->first = s;
  else if (at({"timing", "ops", "#", "median_us"}) && op_) op_->second = s;
  else if (at({"points"})) points_seen_ = true;
  else if (stack_.size() == 3 && at({"points", "#", stack_[2].key.c_str()}) && point_) {
    if (const auto f = field_of(stack_[2].key)) (*point_)[*f] = s;
  }
  const bool object = s.kind == Scalar::Kind::container && s.text == "{";
  const bool array = s.kind == Scalar::Kind::container && s.text == "[";
  if (at({"points"}) && !array) problem("/points", "is not an array of points");
  if (in_points_item() && !object) problem(pointer(2), "is not an object (a point)");
}

// A time or spread: absent or null is "none", else a finite number of 0 or more.
std::optional<double> non_negative(const std::optional<Scalar>& s, const std::string& where, std::string* why) {
  if (!s || s->kind == Scalar::Kind::null) return std::nullopt;
  if (s->kind != Scalar::Kind::number || !std::isfinite(s->number)) {
    *why = where + ": is not a number";
    return std::nullopt;
  }
  if (s->number < 0) *why = where + ": is " + json(s->number).dump() + "; it must be 0 or more";
  return s->number;
}

void Reader::end_point() {
  const auto& p = *point_;
  std::string why;
  for (Field f : {m, n, k}) {
    const auto& v = p[f];
    if (!v || v->kind != Scalar::Kind::number || !v->integer || v->number < 1)
      why = why.empty() ? std::string(kFieldNames[f]) + ": missing or not a whole number of 1 or more" : why;
  }
  if (!p[result] || p[result]->kind != Scalar::Kind::string) why = why.empty() ? "result: missing or not a string" : why;
  std::string bad;
  const double med = non_negative(p[median_us], "median_us", &bad).value_or(0);
  const auto spread_v = p[spread] ? non_negative(p[spread], "spread", &bad) : non_negative(p[cv], "cv", &bad);
  if (why.empty()) why = bad;
  if (!why.empty()) {
    problem(point_at_, why);
    point_.reset();
    return;
  }
  auto t = [&](Field f) { return p[f] ? scalar_text(*p[f]) : std::string(); };
  std::string key = t(m) + "x" + t(n) + "x" + t(k);
  if (p[batch] && p[batch]->kind == Scalar::Kind::number && p[batch]->number > 1) key += " b" + t(batch);
  // A grouped point (gexec gemm --groups): T tokens over G experts as routed; m holds T.
  if (p[groups] && p[groups]->kind == Scalar::Kind::number && p[groups]->number > 0)
    key += " G" + t(groups) + " " + t(routing);
  key += " " + t(dtype) + "->" + t(out_dtype) + " bias " + t(bias) + " " + t(act) + " " + t(trans) + " " + t(l2) +
         " " + t(backend);
  const auto [first, fresh] = point_keys_.emplace(key, point_at_);
  if (!fresh) problem(point_at_, "the same point as " + first->second + " (" + key + "); compare cannot tell them apart");
  else points_.push_back({key, {med, spread_v.value_or(0), t(result) == "pass"}});
  point_.reset();
}

void Reader::end_op() {
  const auto& [name, med] = *op_;
  std::string bad;
  const double us = non_negative(med, "median_us", &bad).value_or(0);
  if (!name || name->kind != Scalar::Kind::string) bad = "name: missing or not a string";
  if (!bad.empty()) {
    problem(op_at_, bad);
  } else {
    const std::string key = "op " + name->text;
    const auto [first, fresh] = op_keys_.emplace(key, op_at_);
    if (!fresh) problem(op_at_, "the same op as " + first->second + " (" + name->text + ")");
    else ops_.push_back({key, {us, 0, true}});
  }
  op_.reset();
}

Result<ResultsFile> Reader::finish() {
  if (!not_json_.empty()) return bad_input(not_json_);
  const std::string format = format_ && format_->kind == Scalar::Kind::string ? format_->text : "";
  if (!top_is_object_ || (format != "gexec.gemm" && format != "gexec.report"))
    return bad_input(path_text(path_) + ": neither a `gexec gemm --json` file (format gexec.gemm) nor a `gexec run "
                     "--report` file (format gexec.report)");
  const bool gemm = format == "gexec.gemm";
  const int newest = gemm ? kGemmVersion : kReportVersion;
  if (!version_ || version_->kind != Scalar::Kind::number || !version_->integer || version_->number < 1 ||
      version_->number > newest)
    problem("/version", (version_ ? "is " + (scalar_text(*version_).empty() ? std::string("not a number")
                                                                              : scalar_text(*version_))
                                  : std::string("missing")) +
                            "; this gexec reads " + format + " versions 1 to " + std::to_string(newest));
  ResultsFile out{format, {}};
  if (gemm) {
    if (!points_seen_) problem("/points", "missing; a `gexec gemm --json` file lists its points there");
    out.rows = std::move(points_);
  } else {
    if (!timing_seen_) problem("/timing", "missing or null: this report has no timing (run with --iters N)");
    std::string bad;
    const double med = non_negative(median_, "/timing/median_us", &bad).value_or(0);
    double noise = 0;
    if (med > 0 && p90_ && p90_->kind == Scalar::Kind::number) noise = (p90_->number - med) / med;
    else noise = non_negative(cv_, "/timing/cv", &bad).value_or(0);
    if (timing_seen_ && !bad.empty()) problem(bad.substr(0, bad.find(':')), bad.substr(bad.find(':') + 2));
    if (timing_seen_ && !(noise >= 0)) problem("/timing/p90_us", "is below the median; the file is not a measurement");
    const bool passed = result_ && result_->kind == Scalar::Kind::string && result_->text == "pass";
    const std::string graph = graph_name_ ? scalar_text(*graph_name_) : "";
    out.rows.push_back({"run " + graph, {med, noise, passed}});
    for (auto& [key, m] : ops_) out.rows.push_back({std::move(key), {m.median_us, noise, passed}});
  }
  if (!problems_.empty()) {
    std::string all;
    for (const std::string& p : problems_) all += (all.empty() ? "" : "\n") + p;
    return bad_input(all);
  }
  return out;
}

// The file's bytes for the parser, in pieces: never the whole file in memory.
class FileBuf : public std::streambuf {
 public:
  explicit FileBuf(InputFile& f) : f_(f) {}
  Status status() const { return status_; }

 protected:
  int_type underflow() override {
    auto got = f_.read_some(buf_.data(), buf_.size());
    if (!got) status_ = got.error();
    if (!got || *got == 0) return traits_type::eof();
    setg(buf_.data(), buf_.data(), buf_.data() + *got);
    return traits_type::to_int_type(buf_[0]);
  }

 private:
  InputFile& f_;
  std::array<char, 1 << 16> buf_{};
  Status status_;
};

}  // namespace

Result<ResultsFile> read_results(std::istream& in, const std::string& path) {
  Reader reader(path);
  json::sax_parse(in, &reader);
  return reader.finish();
}

Result<ResultsFile> read_results_file(const std::string& path) {
  auto f = InputFile::open(path);
  if (!f) return f.error();
  FileBuf buf(*f);
  std::istream in(&buf);
  auto r = read_results(in, path);
  if (!buf.status()) return buf.status().error();
  return r;
}

}  // namespace gexec
