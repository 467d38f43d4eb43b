#pragma once
// The workers of a hybrid run (--backend hybrid, hybrid_run.hpp) and the loop that drives them
// over one HybridQueue: a host thread a worker, the GPU's taking bands from the heavy end, the CPU
// team's from the light end, each band sized by the rate its worker has shown so far. A worker is
// a backend on some threads, so more GPUs are more workers at the heavy end ("cuda device i").
#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <span>
#include <string>
#include <vector>

#include "twobody/detail/engine/backend.hpp"
#include "twobody/detail/engine/hybrid_policy.hpp"
#include "twobody/detail/engine/hybrid_queue.hpp"
#include "twobody/detail/engine/reductions.hpp"

namespace twobody {

struct HybridWorker {
  std::string name;               // for the report: "cuda: <device>", "cpu: 15 threads", ...
  std::string backend = "cpu";    // what its runs ask for: "cuda" or "cpu"
  int device = -1;                // its device (RunOptions::devices), its thread's current one (-1: none)
  int threads = 1;                // host threads its runs use
  HybridQueue::End end = HybridQueue::End::Light;
  double band_seconds = 0.02;     // the time a band should take at its rate
  double first_share = 0;         // its first band: this fraction of the run (0: min_units)
  std::size_t min_units = 1;      // the fewest units a band takes (enough rows for its threads)
  // Its backend, made on its own thread (after the device is set).
  std::unique_ptr<Backend> make_backend() const;
};

struct HybridCrew {
  std::vector<HybridWorker> workers;  // heavy-end workers first
  std::string alone;                  // why the CPU runs alone ("" when a GPU worker is there)
};

// A GPU worker a device of RunOptions::devices (none given: the current device; the fake one of
// TWOBODY_HYBRID_FAKE_GPU), unless there is none or `refuses` gives its backend's reason not to
// run the statistic (then none), then the CPU team on the threads left (RunOptions::threads less
// a host thread a GPU, at least one).
HybridCrew hybrid_crew(const RunOptions& opt, const HybridPolicy& policy,
                       const std::function<std::string(const Backend&)>& refuses);

// What a band did, for the worker's share.
struct BandTally {
  std::uint64_t rows = 0, pairs = 0;
};
// Runs the units [take.first, take.last) on `backend` with the worker's threads; `progress`
// takes the band's own fraction done. Called from the worker's thread.
using BandRunner = std::function<BandTally(const HybridWorker& worker, Backend& backend, const HybridQueue::Take& take,
                                           const std::function<void(double)>& progress)>;

// Runs the queue dry and gives each worker's share. The first worker runs on the calling thread.
// The first exception of any worker (a progress callback's cancellation included) stops every
// worker at its next band and is thrown again here.
std::vector<WorkerShare> drive_queue(const std::vector<HybridWorker>& workers, HybridQueue& queue,
                                     const BandRunner& run_band, const std::function<void(double)>& progress);

// |T_1 - T_2| / max(T_1, T_2) of the workers' busy seconds ((max - min) / max for more than two).
double load_imbalance(const std::vector<WorkerShare>& shares);

// The plan's lines: the workers and the queue before a run; their shares after it.
std::string describe_crew(const HybridCrew& crew, const HybridPolicy& policy);
std::string describe_shares(const std::vector<WorkerShare>& shares, double imbalance);

// RunOptions::pair_sink fed by every worker's pieces: a batch moved to the whole run's indices
// (the piece's placement), sorted by (i, j), max_pairs checked on the running total, and handed to
// the caller's sink one batch at a time.
class SharedPairSink {
 public:
  SharedPairSink(std::function<void(std::span<const PairRecord>)> sink, std::size_t max_pairs, const char* narrow)
      : sink_(std::move(sink)), max_pairs_(max_pairs), narrow_(narrow) {}
  std::function<void(std::span<const PairRecord>)> for_piece(const PiecePlacement& where);

 private:
  std::function<void(std::span<const PairRecord>)> sink_;
  std::size_t max_pairs_;
  const char* narrow_;
  std::mutex mutex_;
  std::uint64_t listed_ = 0;
};

// What every hybrid run adds to its merged result: pairs sorted, the run's sets, time since t0,
// the workers' shares, and the plan (the header, the crew and the shares, each worker's last
// piece's own plan), then RunOptions::on_plan.
void finish_hybrid(Result& r, const std::string& plan, const std::vector<WorkerShare>& shares,
                   std::chrono::steady_clock::time_point t0, std::size_t n_a, std::size_t n_b, const RunOptions& opt);

}  // namespace twobody
