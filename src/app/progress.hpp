// A one-line progress bar on stderr for long work, shown only when stderr is a terminal and
// messages of level info are on (never under -q).
#pragma once

#include <chrono>
#include <string>

namespace gexec {

class Progress {
 public:
  // Nothing is drawn until `delay_s` has passed, so short work prints nothing; nothing at all
  // when stderr, where it is drawn, is not a terminal, under -q, or when `allowed` is false.
  explicit Progress(std::string label, double delay_s = 1.0, bool allowed = true);
  ~Progress();  // clears the line, if one was drawn
  Progress(const Progress&) = delete;
  Progress& operator=(const Progress&) = delete;

  // `done` in [0, 1]; safe to call often, draws at most every 100 ms. Not thread-safe: call it
  // from one thread.
  void update(double done);
  // Erases the line, if drawn, so that other output can follow; the next update draws it again.
  void clear();

 private:
  std::string label_;
  double delay_s_;
  bool enabled_;
  bool drawn_ = false;
  std::chrono::steady_clock::time_point start_, last_;
};

}  // namespace gexec
