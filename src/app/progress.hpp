// A one-line progress bar on stderr for long work, shown only when stderr is a terminal and
// messages of level info are on (never under -q): the share done (and "done/total" where counted),
// the time elapsed and an estimate of the time left.
#pragma once

#include <chrono>
#include <cstdint>
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
  // `done` items of `total` (a sweep's points): drawn as "done/total" beside the bar.
  void update(int64_t done, int64_t total);
  // Erases the line, if drawn, so that other output can follow; the next update draws it again.
  void clear();

 private:
  std::string label_;
  double delay_s_;
  bool enabled_;
  bool drawn_ = false;
  size_t width_ = 0;  // of the line last drawn, to erase it
  void draw(double done, const std::string& count);
  std::chrono::steady_clock::time_point start_, last_;
};

}  // namespace gexec
