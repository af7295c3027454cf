// Fault injection for tests (see fault.hpp): parsing GEXEC_FAULT and counting the events it names.
#include "fault.hpp"

#include <atomic>
#include <charconv>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <mutex>

namespace gexec::cuda::fault {
namespace {

struct Spec {
  int64_t alloc = 0;   // the allocation to fail, counted from 1; 0: none
  bool epilogue = false;
  int64_t launch = 0;  // the elementwise launch to break, counted from 1; 0: none
};

// The faults in force and the counts since they were set. The counts are atomic because the
// backend may be used from more than one thread (tests); the spec changes only in configure().
struct State {
  std::mutex mutex;
  Spec spec;
  std::string text;
  std::atomic<int64_t> allocs{0}, launches{0};
  std::atomic<bool> any{false};
};

Result<int64_t> positive(std::string_view item, std::string_view digits) {
  int64_t n = 0;
  const auto [end, ec] = std::from_chars(digits.data(), digits.data() + digits.size(), n);
  if (ec != std::errc() || end != digits.data() + digits.size() || n < 1)
    return bad_input("GEXEC_FAULT: \"" + std::string(item) + "\": the count must be a whole number from 1");
  return n;
}

Result<Spec> parse(std::string_view spec) {
  Spec s;
  while (!spec.empty()) {
    const size_t comma = spec.find(',');
    const std::string_view item = spec.substr(0, comma);
    spec = comma == std::string_view::npos ? std::string_view() : spec.substr(comma + 1);
    if (item.empty()) continue;
    if (item.rfind("alloc:", 0) == 0) {
      auto n = positive(item, item.substr(6));
      if (!n) return n.error();
      s.alloc = *n;
    } else if (item == "epilogue") {
      s.epilogue = true;
    } else if (item == "launch") {
      s.launch = 1;
    } else if (item.rfind("launch:", 0) == 0) {
      auto n = positive(item, item.substr(7));
      if (!n) return n.error();
      s.launch = *n;
    } else {
      return bad_input("GEXEC_FAULT: unknown fault \"" + std::string(item) +
                       "\"; expected alloc:N, epilogue, launch or launch:N");
    }
  }
  return s;
}

void install(State& st, const Spec& s, std::string_view text) {
  std::lock_guard<std::mutex> lock(st.mutex);
  st.spec = s;
  st.text = std::string(text);
  st.allocs = 0;
  st.launches = 0;
  st.any = s.alloc > 0 || s.epilogue || s.launch > 0;
}

// Built on first use from the environment. A spec that cannot be parsed is said once on stderr
// and ignored: the backend has no error path at this point, and a test that meant to inject a
// fault then fails on its own expectations.
State& state() {
  static State* st = [] {
    auto* s = new State();  // never destroyed: queried from destructors that may run at exit
    const char* env = std::getenv("GEXEC_FAULT");
    if (env && *env) {
      auto spec = parse(env);
      if (spec) install(*s, *spec, env);
      else std::fprintf(stderr, "gexec: %s; no fault is injected\n", spec.error().message.c_str());
    }
    return s;
  }();
  return *st;
}

}  // namespace

Status configure(std::string_view spec) {
  auto s = parse(spec);
  if (!s) return s.error();
  install(state(), *s, spec);
  return {};
}

std::string active() {
  State& st = state();
  std::lock_guard<std::mutex> lock(st.mutex);
  return st.any ? st.text : std::string();
}

bool fail_allocation() {
  State& st = state();
  if (!st.any || st.spec.alloc == 0) return false;
  return ++st.allocs == st.spec.alloc;
}

bool refuse_epilogue() {
  State& st = state();
  return st.any && st.spec.epilogue;
}

bool break_launch() {
  State& st = state();
  if (!st.any || st.spec.launch == 0) return false;
  return ++st.launches == st.spec.launch;
}

}  // namespace gexec::cuda::fault
