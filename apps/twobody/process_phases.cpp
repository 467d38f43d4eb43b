#include "process_phases.hpp"

#include <fmt/format.h>

#include "twobody/detail/engine/memory.hpp"

namespace twobody::cli {

ProcessPhases& ProcessPhases::get() {
  static ProcessPhases phases;
  return phases;
}

void ProcessPhases::enable() {
  const std::lock_guard lock(mutex_);
  enabled_ = true;
  clock_ = PhaseClock{};
}

void ProcessPhases::lap(const std::string& phase) {
  const std::lock_guard lock(mutex_);
  if (enabled_) clock_.lap(phase);
}

void ProcessPhases::catalogue(const PointSet& p) {
  const std::lock_guard lock(mutex_);
  if (!enabled_) return;
  const double columns = p.dim() + (p.has_weights() ? 1 : 0);
  catalogue_bytes_ += 8.0 * columns * static_cast<double>(p.size());
}

void ProcessPhases::device_start_up(double seconds) {
  const std::lock_guard lock(mutex_);
  start_up_seconds_ = seconds;
}

void ProcessPhases::device_shown(const std::string& visible) {
  const std::lock_guard lock(mutex_);
  shown_ = visible;
}

std::string ProcessPhases::text() const {
  const std::lock_guard lock(mutex_);
  if (!enabled_ || clock_.empty()) return {};
  const double peak = peak_resident_bytes();
  std::string s = fmt::format("twobody: process phases (wall time, peak resident memory after each): {}\n",
                              clock_.text());
  s += fmt::format("twobody: peak resident memory {}", format_bytes(peak));
  if (catalogue_bytes_ > 0)
    s += fmt::format(" = {:.2f}x the catalogues ({} as float64 coordinates and weights)", peak / catalogue_bytes_,
                     format_bytes(catalogue_bytes_));
  s += "\n";
  if (start_up_seconds_ >= 0)
    s += fmt::format("twobody: device start-up {:.3f} s (CUDA's context and memory pool, and the run's first kernels loaded, on a thread of its own beside "
                     "the reading; the first run waits for what is left of it{})\n",
                     start_up_seconds_,
                     shown_.empty() ? std::string()
                                    : fmt::format("; the driver was shown the run's device alone, CUDA_VISIBLE_DEVICES={}, "
                                                  "which starts faster: TWOBODY_ALL_DEVICES_VISIBLE=1 shows it all",
                                                  shown_));
  return s;
}

}  // namespace twobody::cli
