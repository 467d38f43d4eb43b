#include "twobody/detail/engine/phase_clock.hpp"

#include <fmt/format.h>

#include "twobody/detail/engine/memory.hpp"

namespace twobody {

void PhaseClock::lap(std::string_view name) {
  const auto now = std::chrono::steady_clock::now();
  laps_.push_back({std::string(name), std::chrono::duration<double>(now - t_).count(), peak_resident_bytes()});
  t_ = now;
}

std::string PhaseClock::text() const {
  std::string s;
  for (const Lap& l : laps_)
    s += fmt::format("{}{} {} (peak {})", s.empty() ? "" : ", ", l.name, format_seconds(l.seconds),
                     format_bytes(l.peak_bytes));
  return s;
}

std::string format_seconds(double seconds) {
  if (seconds >= 1.0) return fmt::format("{:.2f} s", seconds);
  if (seconds >= 0.01) return fmt::format("{:.0f} ms", seconds * 1e3);
  return fmt::format("{:.2f} ms", seconds * 1e3);
}

std::string format_bytes(double bytes) {
  if (bytes >= 1e9) return fmt::format("{:.2f} GB", bytes / 1e9);
  return fmt::format("{:.0f} MB", bytes / 1e6);
}

}  // namespace twobody
