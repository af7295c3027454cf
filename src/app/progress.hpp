// A one-line progress bar on stderr for long work, shown only when stdout is a terminal.
#pragma once

#include <chrono>
#include <string>

namespace gexec {

class Progress {
 public:
  // Nothing is drawn until `delay_s` has passed, so short work prints nothing; nothing at all
  // when stdout is not a terminal (a pipe or a file gets clean output).
  explicit Progress(std::string label, double delay_s = 1.0);
  ~Progress();  // clears the line, if one was drawn
  Progress(const Progress&) = delete;
  Progress& operator=(const Progress&) = delete;

  // `done` in [0, 1]; safe to call often, draws at most every 100 ms. Not thread-safe: call it
  // from one thread.
  void update(double done);

 private:
  std::string label_;
  double delay_s_;
  bool enabled_;
  bool drawn_ = false;
  std::chrono::steady_clock::time_point start_, last_;
};

}  // namespace gexec
