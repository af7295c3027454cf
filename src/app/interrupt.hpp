// Ctrl-C as a request to stop: while a StopOnInterrupt lives, the first SIGINT only raises a flag
// that long work asks about (between sweep points, timing samples, tuning candidates), so that the
// command ends cleanly with what it finished (exit 130, one line); a second SIGINT ends the process
// at once, as without it (temporary output files removed).
#pragma once

#include "gexec/status.hpp"

namespace gexec {

class StopOnInterrupt {
 public:
  StopOnInterrupt();   // installs the handler (nested scopes: the outer one's stays)
  ~StopOnInterrupt();  // puts the previous handler back
  StopOnInterrupt(const StopOnInterrupt&) = delete;
  StopOnInterrupt& operator=(const StopOnInterrupt&) = delete;

 private:
  bool installed_ = false;
};

// Whether SIGINT came while a StopOnInterrupt was alive.
bool interrupt_requested();
// An Exit::interrupted error ("interrupted (Ctrl-C)") once requested; success before.
Status check_interrupt();

}  // namespace gexec
