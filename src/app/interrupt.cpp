// The SIGINT handler: async-signal-safe (a flag, then sigaction and raise for a second signal).
#include "interrupt.hpp"

#include <signal.h>

#include "gexec/io/file.hpp"

namespace gexec {
namespace {

volatile sig_atomic_t g_requested = 0;
struct sigaction g_previous {};
bool g_installed = false;

extern "C" void request_stop(int sig) {
  if (g_requested) {
    // The second Ctrl-C: the handler from before (removing temporary files) or the default.
    ::sigaction(sig, &g_previous, nullptr);
    ::raise(sig);
    return;
  }
  g_requested = 1;
}

}  // namespace

StopOnInterrupt::StopOnInterrupt() {
  if (g_installed) return;
  // First the temporary files' handler, so that a second Ctrl-C still removes them.
  install_temp_file_cleanup();
  struct sigaction old {};
  if (::sigaction(SIGINT, nullptr, &old) != 0 || old.sa_handler == SIG_IGN) return;  // ignored stays ignored
  struct sigaction sa {};
  sa.sa_handler = request_stop;
  sigemptyset(&sa.sa_mask);
  g_previous = old;
  g_requested = 0;
  if (::sigaction(SIGINT, &sa, nullptr) != 0) return;
  g_installed = installed_ = true;
}

StopOnInterrupt::~StopOnInterrupt() {
  if (!installed_) return;
  ::sigaction(SIGINT, &g_previous, nullptr);
  g_installed = false;
}

bool interrupt_requested() { return g_requested != 0; }

Status check_interrupt() {
  if (!g_requested) return {};
  return Error{Exit::interrupted, "interrupted (Ctrl-C)"};
}

}  // namespace gexec
