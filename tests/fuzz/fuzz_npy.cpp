// libFuzzer target: arbitrary bytes as a .npy file through read_npy, the dtype rule, a write and
// read back, and the JSON report writer with whatever message came out, aborting on any broken
// invariant (a message that is not one bounded line of valid UTF-8, a report that throws).
#include <unistd.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <string_view>

#include <nlohmann/json.hpp>

#include "gexec/io/npy.hpp"
#include "gexec/io/text.hpp"

namespace {

using namespace gexec;

[[noreturn]] void fail(const std::string& what, const std::string& detail) {
  std::fprintf(stderr, "fuzz_npy: invariant broken: %s\n%s\n", what.c_str(), printable(detail).c_str());
  std::abort();
}

void check(bool ok, const std::string& what, const std::string& detail = {}) {
  if (!ok) fail(what, detail);
}

// One file per process, rewritten for every input.
const std::string& scratch(const char* tag) {
  static std::string paths[2];
  std::string& p = paths[tag[0] == 'o'];
  if (p.empty()) p = "/tmp/gexec_fuzz_npy_" + std::to_string(getpid()) + "_" + tag + ".npy";
  return p;
}

void check_message(const std::string& m) {
  check(!m.empty(), "an error says why");
  check(m.find('\n') == std::string::npos, "an error is one line", m);
  check(printable(m) == m, "an error is printable UTF-8", m);
  check(m.size() <= 1024, "an error is bounded", m);
}

// The report writer with the message in it, and the raw bytes as a string: never throws.
void check_report(const std::string& message, std::string_view raw) {
  nlohmann::json rep = {{"result", "error"}, {"error", message}, {"raw", std::string(raw.substr(0, 256))}};
  const std::string text = dump_json(rep);
  check(nlohmann::json::accept(text), "the report is valid JSON", text);
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string& in = scratch("in");
  FILE* f = std::fopen(in.c_str(), "wb");
  if (!f) return 0;
  if (size) std::fwrite(data, 1, size, f);
  std::fclose(f);
  const std::string_view raw(reinterpret_cast<const char*>(data), size);

  auto a = read_npy(in);
  if (!a) {
    check(a.error().code == Exit::bad_input, "a bad file is bad_input", a.error().message);
    check_message(a.error().message);
    check_report(a.error().message, raw);
    return 0;
  }
  int64_t n = 1;
  for (int64_t d : a->shape) n *= d;
  check(int64_t(a->values.size()) == n, "one value per element");
  for (DType t : {DType::f16, DType::bf16, DType::f32}) {
    const std::string why = npy_dtype_problem(a->descr, t);
    if (!why.empty()) check_message(why);
  }
  check_report(a->descr, raw);
  // Written back as f32 and read again: the same shape and, for finite values, the same floats.
  if (n > 0 && n <= (1 << 16) && !a->shape.empty()) {
    std::vector<float> vals(a->values.begin(), a->values.end());
    const std::string& out = scratch("out");
    Status s = write_npy_f32(out, a->shape, vals.data());
    check(s.ok(), "an array read writes back", s.ok() ? "" : s.error().message);
    auto back = read_npy(out);
    check(back.ok() && back->shape == a->shape, "a written array reads back with its shape");
    for (size_t i = 0; i < vals.size(); ++i)
      check(back->values[i] == double(vals[i]) || vals[i] != vals[i], "a written array reads back its values");
  }
  return 0;
}
