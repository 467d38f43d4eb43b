#pragma once
// A progress bar on stderr, shown only when stderr is a terminal and the run has lasted more than
// a second, so that pipes, files and CI logs stay clean.
#include <chrono>
#include <mutex>
#include <string>

namespace twobody::cli {

class ProgressBar {
 public:
  ProgressBar();
  ~ProgressBar() { finish(); }
  bool enabled() const { return tty_; }
  void update(double fraction);
  void finish();
  // Writes `text` to stderr on lines of its own: the bar, if shown, is cleared first and drawn
  // again at the next update. Safe to call while runs on other threads report progress.
  void print(const std::string& text);

 private:
  using Clock = std::chrono::steady_clock;
  void clear();
  const bool tty_;
  bool shown_ = false;
  Clock::time_point start_ = Clock::now(), last_ = start_;
  std::mutex mutex_;
};

}  // namespace twobody::cli
