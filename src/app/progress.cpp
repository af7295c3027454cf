// The progress bar: a carriage-return-redrawn line on stderr.
#include "progress.hpp"

#include <spdlog/spdlog.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <cstring>

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
  if (drawn_) std::fprintf(stderr, "\r%*s\r", int(width_), "");
  std::fflush(stderr);
  drawn_ = false;
}

void Progress::update(double done) { draw(done, ""); }

void Progress::update(int64_t done, int64_t total) {
  if (total <= 0) return;
  draw(double(done) / double(total), " " + std::to_string(done) + "/" + std::to_string(total));
}

namespace {
// "12.3s", "4m05s", "2h03m".
std::string duration_text(double s) {
  char buf[32];
  if (s < 60) std::snprintf(buf, sizeof buf, "%.1fs", s);
  else if (s < 3600) std::snprintf(buf, sizeof buf, "%dm%02ds", int(s / 60), int(s) % 60);
  else std::snprintf(buf, sizeof buf, "%dh%02dm", int(s / 3600), int(s / 60) % 60);
  return buf;
}
}  // namespace

void Progress::draw(double done, const std::string& count) {
  if (!enabled_) return;
  const auto now = std::chrono::steady_clock::now();
  const double since_start = std::chrono::duration<double>(now - start_).count();
  const double since_last = std::chrono::duration<double>(now - last_).count();
  if (since_start < delay_s_ || (drawn_ && since_last < kRedrawS)) return;
  done = std::clamp(done, 0.0, 1.0);
  const int filled = int(done * kWidth);
  std::string bar(size_t(filled), '#');
  bar.resize(kWidth, '.');
  // The estimate assumes the rest goes at the pace so far; none before anything is done.
  const std::string left = done > 0 && done < 1 ? ", ~" + duration_text(since_start * (1 - done) / done) + " left" : "";
  char line[512];
  std::snprintf(line, sizeof line, "%s [%s]%s %3.0f%% %s%s", label_.c_str(), bar.c_str(), count.c_str(), done * 100,
                duration_text(since_start).c_str(), left.c_str());
  const size_t width = std::strlen(line);
  // Padded over the previous line's tail where this one is shorter.
  std::fprintf(stderr, "\r%s%*s", line, int(width_ > width ? width_ - width : 0), "");
  std::fflush(stderr);
  width_ = std::max(width_, width);
  drawn_ = true;
  last_ = now;
}

}  // namespace gexec
