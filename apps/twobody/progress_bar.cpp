#include "progress_bar.hpp"

#include <unistd.h>

#include <cstdio>
#include <string>

namespace twobody::cli {

ProgressBar::ProgressBar() : tty_(isatty(STDERR_FILENO) == 1) {}

void ProgressBar::update(double f) {
  const std::lock_guard<std::mutex> lock(mutex_);
  const auto now = Clock::now();
  const double elapsed = std::chrono::duration<double>(now - start_).count();
  if (!tty_ || elapsed < 1.0 || now - last_ < std::chrono::milliseconds(100)) return;
  last_ = now;
  shown_ = true;
  constexpr int width = 40;
  const int filled = static_cast<int>(f * width);
  const double eta = f > 0 ? elapsed * (1.0 - f) / f : 0.0;
  std::fprintf(stderr, "\r[%s%s] %5.1f%%  %.0fs left ", std::string(filled, '#').c_str(),
               std::string(width - filled, ' ').c_str(), 100.0 * f, eta);
  std::fflush(stderr);
}

void ProgressBar::finish() {
  const std::lock_guard<std::mutex> lock(mutex_);
  clear();
}

void ProgressBar::print(const std::string& text) {
  const std::lock_guard<std::mutex> lock(mutex_);
  clear();
  std::fputs(text.c_str(), stderr);
  std::fflush(stderr);
}

void ProgressBar::clear() {
  if (!shown_) return;
  std::fprintf(stderr, "\r%*s\r", 70, "");
  std::fflush(stderr);
  shown_ = false;
}

}  // namespace twobody::cli
