#pragma once
// "auto" before this process has started a GPU. Starting one costs about kDeviceStartUpSeconds
// whatever the run (on an H200 host: the driver's cuInit 0.10 s, the context 0.13 s, and its
// release as the process ends 0.06–0.11 s; a 10^5-point paircount took 0.39–0.47 s of process
// time on the GPU against 0.03 s on the CPU: bench/RESULTS.md, 2026-11-29). A run the CPU finishes
// in less goes to the CPU instead, the same counts and sums, until the CPU time spent that way
// reaches the start-up's cost; then the GPU is started, as a ski rental does (rent until the rent
// paid equals the price: at most twice the cost of either choice made with hindsight, for one
// small run as for a loop over thousands).
#include <mutex>
#include <string>

namespace twobody {

inline constexpr double kDeviceStartUpSeconds = 0.3;

// Whether a run of `estimate` CPU seconds goes to the CPU after `spent` seconds of such runs.
inline bool rents_the_cpu(double spent, double estimate) {
  return estimate >= 0 && spent + estimate <= kDeviceStartUpSeconds;
}

// The process's account: rent() decides as rents_the_cpu on the seconds spent so far and, when it
// rents, books the estimate; settle() replaces an estimate it booked by the run's seconds.
class CpuRental {
 public:
  static CpuRental& process();
  bool rent(double estimate);
  bool would_rent(double estimate) const;
  void settle(double estimate, double seconds);
  double spent() const;

 private:
  CpuRental() = default;
  mutable std::mutex m_;
  double spent_ = 0;
};

// "auto" for a generated function (pair expressions, matrices): the GPU when the CPU's estimated
// `seconds` (for `count` `units`) exceed kGeneratedGpuWorthSeconds — a GPU's start-up (~0.3 s)
// and the kernel's generation and link (0.6–2.6 s measured, bench/RESULTS.md; none once the
// kernel cache holds it), about twice over — and a device runs generated kernels; else the CPU.
// The device is asked only past the threshold (no driver start-up for a small run). Sets `gpu`,
// returns the plan's note.
inline constexpr double kGeneratedGpuWorthSeconds = 3.0;
std::string weigh_generated_gpu(double seconds, double count, const char* units, bool& gpu);

}  // namespace twobody
