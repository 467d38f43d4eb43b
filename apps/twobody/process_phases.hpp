#pragma once
// The process's phases under --explain, beside each run's own (which its plan prints): reading
// each catalogue, each run, writing the output, with the wall time and the process's peak resident
// memory after each; then that peak against the catalogues' size as float64 (coordinates and
// weights), the measure of how much the whole path holds beyond its input (issue 25: at most 1.5x).
#include <mutex>
#include <string>

#include "twobody/detail/engine/phase_clock.hpp"
#include "twobody/points.hpp"

namespace twobody::cli {

class ProcessPhases {
 public:
  // The one report of this process: a command runs once, and its phases happen in functions
  // (load_points, emit, a run's plan callback) that several commands share.
  static ProcessPhases& get();
  // Starts the clock; until then every call below does nothing.
  void enable();
  void lap(const std::string& phase);
  // A catalogue just read: its float64 bytes count towards the ratio.
  void catalogue(const PointSet& p);
  // The device's start-up (BackendWarmUp: CUDA's context and memory pool, made on a thread of its
  // own while the catalogues are read), said on a line of the report; a run that starts before it
  // is done waits for the rest.
  void device_start_up(double seconds);
  // The CLI showed the driver this device alone (CUDA_VISIBLE_DEVICES, device_visibility.hpp).
  void device_shown(const std::string& visible);
  // The report, lines ending in '\n' ("" when not enabled).
  std::string text() const;

 private:
  mutable std::mutex mutex_;
  bool enabled_ = false;
  PhaseClock clock_;
  double catalogue_bytes_ = 0;
  double start_up_seconds_ = -1;  // (< 0: no device started)
  std::string shown_;             // CUDA_VISIBLE_DEVICES as the CLI set it ("": left alone)
};

}  // namespace twobody::cli
