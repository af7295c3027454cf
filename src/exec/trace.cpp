// The trace hooks: two function pointers, read atomically so that a range opened on one thread
// while another installs them stays balanced.
#include "gexec/exec/trace.hpp"

#include <atomic>

namespace gexec {
namespace {
std::atomic<void (*)(const char*)> g_push{nullptr};
std::atomic<void (*)()> g_pop{nullptr};
}  // namespace

void set_trace_hooks(TraceHooks hooks) {
  g_pop.store(hooks.pop);
  g_push.store(hooks.push);
}

TraceRange::TraceRange(const char* name) {
  auto* push = g_push.load(std::memory_order_relaxed);
  if (!push) return;
  pop_ = g_pop.load(std::memory_order_relaxed);
  if (pop_) push(name);
}

TraceRange::~TraceRange() {
  if (pop_) pop_();
}

}  // namespace gexec
