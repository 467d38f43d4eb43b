#pragma once
// Where a run's time and memory go: each phase's wall time and the process's peak resident memory
// after it, printed in the run's plan (--explain). The peak, not the current size: the high-water
// mark decides whether a run fits, and the phase that raises it is the one to shrink.
#include <chrono>
#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

namespace twobody {

class PhaseClock {
 public:
  // The phase since the last lap (or since the clock was made) ends now.
  void lap(std::string_view name);
  bool empty() const noexcept { return laps_.empty(); }
  std::size_t laps() const noexcept { return laps_.size(); }
  // "index 251 ms (peak 512 MB), traversal 4.61 s (peak 600 MB)"
  std::string text() const;

 private:
  struct Lap {
    std::string name;
    double seconds = 0;
    double peak_bytes = 0;
  };
  std::vector<Lap> laps_;
  std::chrono::steady_clock::time_point t_ = std::chrono::steady_clock::now();
};

// "4.61 s", "251 ms", "0.42 ms": a duration as a person reads it.
std::string format_seconds(double seconds);
// "512 MB", "2.41 GB" (powers of ten, as the benchmarks state sizes).
std::string format_bytes(double bytes);

}  // namespace twobody
