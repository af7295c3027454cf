// Fault injection for tests (see fault.hpp): parsing a GEXEC_FAULT spec and counting the events it names.
#include "fault.hpp"

#include <atomic>
#include <charconv>
#include <cstdint>
#include <cstdio>
#include <mutex>

namespace gexec::cuda::fault {
namespace {

struct Spec {
  int64_t alloc = 0;   // the allocation to fail, counted from 1; 0: none
  bool epilogue = false;
  int64_t launch = 0;  // the elementwise launch to break, counted from 1; 0: none
  bool compile = false;
  bool drop_split = false;
};

// The faults in force and the counts since they were set. Every field the backend queries is
// atomic: kernels may be built and launched from more than one thread (tests), and configure()
// may change the faults while they are. The text is only read by active(), under the mutex.
struct State {
  std::mutex mutex;
  std::string text;
  std::atomic<int64_t> alloc_at{0}, launch_at{0};  // 0: none
  std::atomic<bool> epilogue{false}, compile{false}, drop_split{false};
  std::atomic<int64_t> allocs{0}, launches{0};
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
    } else if (item == "compile") {
      s.compile = true;
    } else if (item == "skinny-drop-split") {
      s.drop_split = true;
    } else if (item == "launch") {
      s.launch = 1;
    } else if (item.rfind("launch:", 0) == 0) {
      auto n = positive(item, item.substr(7));
      if (!n) return n.error();
      s.launch = *n;
    } else {
      return bad_input("GEXEC_FAULT: unknown fault \"" + std::string(item) +
                       "\"; expected alloc:N, epilogue, compile, skinny-drop-split, launch or launch:N");
    }
  }
  return s;
}

State& state() {
  static State* st = new State();  // never destroyed: queried from destructors that may run at exit
  return *st;
}

}  // namespace

Status configure(std::string_view spec) {
  auto s = parse(spec);
  if (!s) return s.error();
  State& st = state();
  std::lock_guard<std::mutex> lock(st.mutex);
  // Off first, so that a query racing with the change never sees a new target with an old count.
  st.alloc_at = 0;
  st.launch_at = 0;
  st.allocs = 0;
  st.launches = 0;
  st.epilogue = s->epilogue;
  st.compile = s->compile;
  st.drop_split = s->drop_split;
  st.alloc_at = s->alloc;
  st.launch_at = s->launch;
  st.text = s->alloc > 0 || s->epilogue || s->compile || s->drop_split || s->launch > 0 ? std::string(spec) : std::string();
  return {};
}

std::string active() {
  State& st = state();
  std::lock_guard<std::mutex> lock(st.mutex);
  return st.text;
}

bool fail_allocation() {
  State& st = state();
  const int64_t at = st.alloc_at.load();
  return at > 0 && ++st.allocs == at;
}

bool refuse_epilogue() { return state().epilogue.load(); }

bool refuse_compile() { return state().compile.load(); }

bool skinny_drop_split() { return state().drop_split.load(); }

bool break_launch() {
  State& st = state();
  const int64_t at = st.launch_at.load();
  return at > 0 && ++st.launches == at;
}

}  // namespace gexec::cuda::fault

namespace gexec {

Status configure_cuda_faults(std::string_view spec) { return cuda::fault::configure(spec); }

}  // namespace gexec
