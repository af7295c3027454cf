// The progress bar: a carriage-return-redrawn line on stderr.
#include "progress.hpp"

#include <spdlog/spdlog.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>

namespace gexec {

namespace {
constexpr int kWidth = 30;
constexpr double kRedrawS = 0.1;
}  // namespace

Progress::Progress(std::string label, double delay_s, bool allowed)
    : label_(std::move(label)), delay_s_(delay_s),
      enabled_(allowed && isatty(STDERR_FILENO) != 0 && spdlog::should_log(spdlog::level::info)),
      start_(std::chrono::steady_clock::now()), last_(start_) {}

Progress::~Progress() { clear(); }

void Progress::clear() {
  if (drawn_) std::fprintf(stderr, "\r%*s\r", int(label_.size()) + kWidth + 16, "");
  std::fflush(stderr);
  drawn_ = false;
}

void Progress::update(double done) {
  if (!enabled_) return;
  const auto now = std::chrono::steady_clock::now();
  const double since_start = std::chrono::duration<double>(now - start_).count();
  const double since_last = std::chrono::duration<double>(now - last_).count();
  if (since_start < delay_s_ || (drawn_ && since_last < kRedrawS)) return;
  done = std::clamp(done, 0.0, 1.0);
  const int filled = int(done * kWidth);
  std::string bar(size_t(filled), '#');
  bar.resize(kWidth, '.');
  std::fprintf(stderr, "\r%s [%s] %3.0f%% %5.1fs", label_.c_str(), bar.c_str(), done * 100, since_start);
  std::fflush(stderr);
  drawn_ = true;
  last_ = now;
}

}  // namespace gexec
