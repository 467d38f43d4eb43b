#pragma once
// The interface every backend implements. The planner hands a backend a validated Plan; the
// backend owns everything about how pairs are visited and reduced on its hardware.
#include <memory>
#include <string>

#include "twobody/detail/engine/key_edges.hpp"
#include "twobody/engine.hpp"

namespace twobody {

struct Plan {
  const Statistic* stat = nullptr;
  const PointSet* a = nullptr;
  const PointSet* b = nullptr;  // equals a for Auto traversal
  KeyEdges edges;               // binning mapped to key space (range for Reduction/PairList)
  int threads = 1;
  std::size_t max_pairs = 0;
  std::function<void(std::span<const PairRecord>)> pair_sink;  // RunOptions::pair_sink
  std::function<void(double)> progress;
  std::string explanation;
  std::string path = "auto";  // RunOptions::path
  // RunOptions::resident when its set is this plan's `a`; null otherwise.
  std::shared_ptr<const ResidentSet> resident;
  bool is_auto() const { return stat->traversal == Traversal::Auto; }
};

// Distinct pairs a traversal evaluates: n(n-1)/2 for auto, na·nb for cross.
inline std::uint64_t pair_total(std::size_t na, std::size_t nb, bool is_auto) {
  return is_auto ? static_cast<std::uint64_t>(na) * (na ? na - 1 : 0) / 2
                 : static_cast<std::uint64_t>(na) * nb;
}

class Backend {
 public:
  virtual ~Backend() = default;
  virtual std::string name() const = 0;
  virtual std::string device() const = 0;
  virtual Result run(const Plan& plan) = 0;
  // How this backend will run the plan (kernels, tiles, threads), for --explain.
  virtual std::string describe(const Plan& plan) const = 0;
  // Pays the backend's one-time start-up cost now (see twobody::warm_up).
  virtual void warm_up() {}
  // Whether run() counts the per-region histograms of Statistic::regions (jackknife). The engine
  // runs a labelled statistic on the CPU, saying why, on a backend that does not: labels are never
  // dropped silently. A backend that implements them (R x nbins counters beside the histogram,
  // see RegionHistogramSink in cpu/output_sinks.hpp) overrides this.
  virtual bool counts_regions() const { return false; }
  // Whether run() bins 2-D statistics (Statistic::binning2d: (r_p, π), (s, μ)). The engine runs
  // them on the CPU, saying why in --explain, on a backend that does not. What a backend
  // implements (the CPU's form is cpu/binned2d.hpp):
  //   - the pairs within Binning2D::cutoff() (any traversal that finds them: the grid built for
  //     that reach, or all pairs), auto (i < j) or cross;
  //   - for each, k = RpPiBins<P>::bin(a, b) or SMuBins<P>::bin(a, b) (binned_pair_functions.hpp,
  //     TWOBODY_HD, P = metric is Periodic), built from Binned2DTables::make(binning2d) with its
  //     two edge tables copied to the device; k < 0: not counted;
  //   - counts[k] += 1, weighted[k] += w_i w_j when weighted, and with regions the same
  //     per-region counters as a 1-D histogram (RegionHistogramSink) with nbins = binning2d.nbins();
  //   - plan.edges holds the flat edges 0, 1, ..., nbins (only its nbins matters).
  virtual bool bins_2d() const { return false; }
  // Whether run() sums the separations per bin of Statistic::mean_separation (Σ s, Σ log s, s =
  // the natural value of the pair's float64 key, times w_i w_j when weighted, in double; with
  // regions too). The engine runs such a statistic on the CPU, saying why, on a backend that
  // does not. The CPU's form: MeanHistogramSink in cpu/output_sinks.hpp.
  virtual bool mean_separation() const { return false; }
  // The same for 2-D bins: per flat bin, Σ and Σ log of the pair's separation along the outer
  // axis (r_p or s: the `sep` of the binned pair function's bin(a, b, sep)).
  virtual bool mean_separation_2d() const { return false; }
  // Whether run() gives OutputKind::PerPoint (Result::per_point_a, per_point_b: per point, the
  // partners in [lo, hi) and, weighted, the sum of their weights, in the callers' point order).
  // The engine runs such a statistic on the CPU, saying why, on a backend that does not. The
  // CPU's form: PerPointSink in cpu/output_sinks.hpp.
  // The most bins of the 1-D histogram `s` this backend takes; a statistic with more runs on the CPU.
  virtual std::size_t max_histogram_bins(const Statistic&) const { return static_cast<std::size_t>(-1); }
  virtual bool per_point() const { return false; }
};

std::unique_ptr<Backend> make_cpu_backend();
// Null when the library was built without CUDA or no CUDA device is visible.
std::unique_ptr<Backend> make_cuda_backend();
// Why make_cuda_backend gives none: no CUDA in this build, or the CUDA runtime's own error (no
// device, a driver older than the runtime, ...), for the message of a run that asked for CUDA.
std::string cuda_unavailable_reason();
// The calling thread's CUDA device (-1 without CUDA), and making it another thread's: a run handed
// to a worker thread (counts side by side) runs on its caller's device, not on device 0.
int current_cuda_device();
void set_current_cuda_device(int device);

}  // namespace twobody
