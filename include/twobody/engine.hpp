#pragma once
#include <cstddef>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "twobody/points.hpp"
#include "twobody/result.hpp"
#include "twobody/statistic.hpp"

namespace twobody {

class Distribution;
class VectorSet;

// A point set counted in several runs of one call: a correlation function's data catalogue in its
// DD and in every DR_i. A backend may keep its copy of the set here, from the first run that uses
// it until this object is destroyed, so that the set is uploaded and indexed once for the whole
// call. The CUDA backend keeps the upload, the float32 frame and the cell index of a cross count.
// A later run reuses them when its partners lie inside that frame; otherwise it makes its own
// copies, and its plan says why. The CPU backend keeps nothing. Runs carry it in
// RunOptions::resident; a run whose first set is not `points()` (a chunk, a process's share)
// ignores it. What is kept belongs to the backend. Runs on several threads at once may share one
// ResidentSet. The set is known by its address: its points, weights and labels must not change
// while the ResidentSet lives (a run would count the kept copy).
class ResidentSet {
 public:
  explicit ResidentSet(const PointSet& points) : points_(&points) {}
  const PointSet& points() const { return *points_; }
  // What a backend keeps: made and read under lock(), replaced when it does not fit a run.
  struct Kept {
    virtual ~Kept() = default;
  };
  std::unique_lock<std::mutex> lock() const { return std::unique_lock<std::mutex>(mutex_); }
  std::shared_ptr<Kept>& kept() const { return kept_; }

 private:
  const PointSet* points_;
  mutable std::mutex mutex_;
  mutable std::shared_ptr<Kept> kept_;
};

struct RunOptions {
  // auto | cpu | cuda | hybrid. hybrid: the CPU and the GPU share the run on one work queue
  // (HEGJoin): the GPU takes bands of work from its heavy end, the other threads from its light
  // end, and the pieces merge to the same result bit for bit. It splits vector joins and k-NN
  // (bands of the first set's rows) and point statistics other than a matrix (the MPI
  // decomposition's slab pairs); a vector histogram or matrix, or a point matrix, runs whole on
  // `auto`. Each device of `devices` (none: the current one) is a GPU worker; without a GPU (or
  // one whose backend refuses the statistic) the CPU runs alone.
  // Result::info.workers gives each side's share and info.load_imbalance their imbalance.
  std::string backend = "auto";
  int threads = 0;               // CPU threads; 0: all available; more than the processors: capped
  // Called with the fraction done, from one thread at a time (not always the same), often; the
  // callee rate-limits its display.
  std::function<void(double)> progress;
  // Pair lists larger than this are refused with Error(Resource) instead of exhausting memory.
  std::size_t max_pairs = std::size_t(1) << 31;
  // Traversal of cutoff statistics: "auto" (the cost model picks), "brute" or "grid" (the cell
  // grid whenever the statistic allows one: Euclidean metric, output ignoring pairs beyond r_max).
  std::string path = "auto";
  // Joins over vectors on the GPU (Euclidean counts and pair lists): "auto" (the cheaper of the two
  // by a sample of the pairs), "fp16" (FP16 Gram tiles on the tensor cores wherever they apply) or
  // "fp64" (the float64 kernel). Every choice gives the exact result (docs/exactness.md); "auto"
  // leaves the choice to TWOBODY_VECTOR_PRECISION when that is set.
  std::string precision = "auto";
  // Splits every run across processes (MPI: twobody/distributed.hpp); null: this process runs all
  // the pairs. Statistics and correlation functions pass their options on, so setting it here
  // distributes all of their counts.
  std::shared_ptr<const Distribution> distribution;
  // The histogram statistics (sdh, paircount, rdf, angular, and correlation's DD) also give the
  // mean separation per bin: Statistic::mean_separation, columns ravg and meanlogr.
  bool mean_separation = false;
  // Pair lists: when set, the pairs go to this callback instead of Result::pairs (left empty), so
  // that a caller can write them to a file without holding them all. Every pair comes once, in
  // batches each sorted by (i, j), the batches in no particular order. The CPU backend hands over
  // each thread's pairs every 65 536 of them, the CUDA backend its output buffer batch by batch as
  // it drains it (point statistics and vector joins); distributed runs give the whole list at the
  // end. max_pairs still limits the total. The callback is called from one thread at
  // a time; an exception it throws stops the run and leaves run().
  std::function<void(std::span<const PairRecord>)> pair_sink = nullptr;
  // A set this call counts again and again (see ResidentSet); null: every run starts afresh.
  std::shared_ptr<const ResidentSet> resident = nullptr;
  // Called by run() after every run it makes, with the plan that run used (Result::info.plan: the
  // planner's choice, the backend's, and what it decided while running). The statistics and
  // correlation functions pass their options on, so a caller sees the plan of each of their counts
  // (DD, DR, RR, ...): the CLI's --explain prints them.
  std::function<void(const std::string&)> on_plan = nullptr;
  // The grids of the run's exact sums (twobody/exact_sums.hpp); unset: fixed from the points given.
  // A Distribution that runs pieces of one run sets the whole run's, so the pieces' sums add
  // exactly; nobody else needs it.
  std::optional<SumGrids> sum_grids;
  // The CUDA devices this run uses (indices among the visible ones: visible_devices()). Empty: this
  // process's device, as use_cuda_device chose. One: that device. Several (a device may repeat: two
  // host threads share it): run() splits the run, one host thread a device: where the device runs
  // it in one piece (not a pair list), every device runs the whole plan on its own copy and the
  // kernels' work items are shared in ranges taken from one queue; otherwise pair jobs (the MPI
  // decomposition's slabs), each device taking the longest job left from one queue. Either way a
  // faster device takes more, and the results are summed on the whole run's sum grids: the same
  // bits as one device's and the CPU's. A matrix, and a statistic the CUDA backend refuses,
  // run whole on the first device (the plan says so). Under an MPI distribution, each rank splits
  // its own jobs over its devices. Error(Config) for an index beyond the visible devices, or with
  // backend "cpu".
  std::vector<int> devices;
};

// How a run is split across processes. run() and explain() hand a call with
// RunOptions::distribution set to it; it runs its pieces through run() without one.
class Distribution {
 public:
  virtual ~Distribution() = default;
  virtual Result run(const Statistic& stat, const PointSet& a, const PointSet* b, const RunOptions& opt) const = 0;
  virtual std::string explain(const Statistic& stat, const PointSet& a, const PointSet* b,
                              const RunOptions& opt) const = 0;
};

// Validates the statistic against the points, plans it and runs it on a backend.
// `b` is the second set for Cross traversal and must be null for Auto.
Result run(const Statistic& stat, const PointSet& a, const PointSet* b, const RunOptions& opt = {});

// The plan the engine would run, as text (the CLI's --explain).
std::string explain(const Statistic& stat, const PointSet& a, const PointSet* b,
                    const RunOptions& opt = {});

// The same over vectors of any dimension (twobody/vectors.hpp): metric Euclidean or Cosine;
// reductions Count, PerPoint, PairList, Histogram (without regions or mean separations), Matrix
// and Nearest; unweighted. Every pair is decided on its float64 key by the rule of
// docs/exactness.md. RunOptions::distribution, resident and sum_grids do not apply.
Result run(const Statistic& stat, const VectorSet& a, const VectorSet* b, const RunOptions& opt = {});
std::string explain(const Statistic& stat, const VectorSet& a, const VectorSet* b, const RunOptions& opt = {});

// The backend that run() would hand this statistic to ("cpu", "cuda", or "hybrid": both), after the fallbacks
// that --explain reports (a backend without jackknife regions, 2-D bins, ... sends the statistic
// to the CPU). Callers use it to decide what to overlap with the counts: host work beside a GPU
// run is free, beside a CPU run it competes for the cores.
std::string runs_on(const Statistic& stat, const RunOptions& opt = {});

// Starts what a backend needs before its first run (for CUDA: the device context and its memory
// pool, ~0.1 s on an H100), so that a caller can overlap it with reading its files, e.g. on a
// std::thread. Does nothing for the CPU or when no GPU is visible; never throws.
void warm_up(const std::string& backend);
// The same on each of `devices` (RunOptions::devices; empty: as warm_up(backend)).
void warm_up(const std::string& backend, const std::vector<int>& devices);
// Only the device's start-up of warm_up (the default device's context and memory pool) and the
// pinned buffers that large copies go through, no kernels loaded: for a caller that then loads
// its own with a tiny run of what it is about to run (the lattice commands do). Never throws.
void start_up_device(const std::string& backend);

// Which CUDA device this process's runs use, from now on: index modulo the visible devices (an MPI
// rank passes its rank on the node, seed 003). Before any call: the current device (0). Does
// nothing without CUDA.
void use_cuda_device(int index);

// Every device RunOptions::devices may name: 0, 1, ..., (visible CUDA devices) - 1; empty without
// CUDA or a device. (TWOBODY_SIMULATED_DEVICES=N, for tests without a GPU: N simulated devices, each
// the CPU backend on one thread.)
std::vector<int> visible_devices();

// Backends compiled into this library ("cpu", and "cuda" when built with CUDA).
std::vector<std::string> available_backends();

}  // namespace twobody
