#pragma once
// A progress bar on stderr, shown only when stderr is a terminal and the run has lasted more than
// a second, so that pipes, files and CI logs stay clean.
#include <chrono>

namespace twobody::cli {

class ProgressBar {
 public:
  ProgressBar();
  ~ProgressBar() { finish(); }
  bool enabled() const { return tty_; }
  void update(double fraction);
  void finish();

 private:
  using Clock = std::chrono::steady_clock;
  bool tty_;
  bool shown_ = false;
  Clock::time_point start_ = Clock::now(), last_ = start_;
};

}  // namespace twobody::cli
