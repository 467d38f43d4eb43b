#pragma once
// The interface every backend implements. The planner hands a backend a validated Plan; the
// backend owns everything about how pairs are visited and reduced on its hardware.
#include <memory>
#include <string>
#include <string_view>

#include "twobody/detail/engine/key_edges.hpp"
#include "twobody/detail/engine/phase_clock.hpp"
#include "twobody/engine.hpp"
#include "twobody/error.hpp"
#include "twobody/vectors.hpp"

namespace twobody {

namespace expr {
struct Compiled;
}
namespace cpu {
struct ExpressionPlan;
struct MatrixJob;
}
class MatrixSink;

class WorkShare;
struct LatticePlan;
struct LatticeMap;

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
  // The grids every floating sum of the run goes on (twobody/exact_sums.hpp): from the whole
  // input, or RunOptions::sum_grids for a piece of a split run.
  SumGrids grids;
  // Several devices running this same plan share its work items (engine/work_share.hpp): this
  // run's kernels take only the ranges they claim. Null: every item. Only for a backend whose
  // takes_shares(plan) is true.
  WorkShare* share = nullptr;
  // The run's phases (--explain): a backend laps its own (index, traversal, merge) into it. Null:
  // nobody asked.
  PhaseClock* clock = nullptr;
  bool is_auto() const { return stat->traversal == Traversal::Auto; }
  void lap(std::string_view phase) const {
    if (clock) clock->lap(phase);
  }
};

// Rows [begin, end) of a run's first set: the anchors of a band (engine/vector_bands.hpp).
struct RowBand {
  std::size_t begin = 0, end = 0;
  std::size_t size() const { return end - begin; }
};

// A run over vectors (twobody/vectors.hpp), validated by make_vector_plan.
struct VectorPlan {
  const Statistic* stat = nullptr;
  const VectorSet* a = nullptr;
  const VectorSet* b = nullptr;  // equals a for Auto traversal
  KeyEdges edges;                // bins or range in key space (none for Matrix and Nearest)
  int k = 0;                     // Nearest
  std::string precision = "auto";  // RunOptions::precision
  int threads = 1;
  std::string path = "auto";  // RunOptions::path: the CPU join's traversal (auto, brute, grid: EGO)
  std::size_t max_pairs = 0;
  std::function<void(std::span<const PairRecord>)> pair_sink;
  std::function<void(double)> progress;
  std::string explanation;
  // The anchors this run takes: all of `a` (make_vector_plan), or a band of it (the hybrid's
  // share of work; Count, PerPoint, PairList and Nearest only). A band [r0, r1) runs the pairs
  // (i, j) with i in it: cross, every j of b; auto, every j > i (each unordered pair of the whole
  // run in exactly one band); Nearest, every partner of b (auto: of a, i itself excluded). Its
  // Result is the band's piece, numbered as band_placement (vector_bands.hpp) places it.
  RowBand band;
  bool is_auto() const { return stat->traversal == Traversal::Auto; }
  bool banded() const { return band.begin != 0 || band.end != a->size(); }
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
  // Why this backend does not run `s` ("" when it does): the engine then runs it on the CPU and
  // says so in the plan, so that nothing a statistic asks for (jackknife regions, 2-D bins, mean
  // separations, per-point sums, ...) is ever dropped. A backend runs a reduction type
  // (twobody/reduction.hpp) by giving its output for it: the CPU's sinks are in
  // cpu/output_sinks.hpp, the CUDA backend's outputs in cuda/pair_output.cuh; a 2-D histogram is
  // the 1-D histogram's output over the flat bins of a binned pair function
  // (engine/binned_pair_functions.hpp, plan.edges then holds 0, 1, ..., nbins).
  virtual std::string refuses(const Statistic&) const { return {}; }
  // Whether run(plan) honours Plan::share: the whole plan in one set of launches over one item
  // space (no chunks), and an output the devices' results add up to (not a pair list or matrix).
  virtual bool takes_shares(const Plan&) const { return false; }
  // The same three for vector statistics (engine.hpp's run over VectorSet). A backend that has no
  // vector kernels for `s` says why, and the engine runs it on the CPU, which runs them all.
  virtual std::string refuses_vectors(const Statistic&) const { return "has no kernels for vectors yet"; }
  virtual Result run_vectors(const VectorPlan&) { throw Error(ErrorKind::Internal, name() + ": no vector kernels"); }
  virtual std::string describe_vectors(const VectorPlan&) const { return {}; }
  // Why this backend does not run bands of `s` (VectorPlan::band; "" when it does, as the CPU):
  // the hybrid backend then leaves it out of the run.
  virtual std::string refuses_bands(const Statistic&) const { return {}; }
  // Lattice maps (twobody/lattice.hpp), planned by the engine (engine/lattice_plan.hpp): whether
  // this backend runs them, and the run into `out`'s values, mask and term count.
  virtual bool runs_lattice() const { return false; }
  virtual void run_lattice(const LatticePlan&, LatticeMap&) { throw Error(ErrorKind::Internal, name() + ": no lattice kernels"); }
  // How it traverses the lattice, for the plan.
  virtual std::string describe_lattice(const LatticePlan&) const { return {}; }
};

std::unique_ptr<Backend> make_cpu_backend();
// Null when the library was built without CUDA or no CUDA device is visible. `device` >= 0: that
// device (an index below cuda_device_count()) becomes the calling thread's current device, which
// the backend runs on (CUDA's current device is per host thread); -1: use_cuda_device's choice, or
// the thread's current device.
std::unique_ptr<Backend> make_cuda_backend(int device = -1);
// CUDA devices visible to this process (0 without CUDA or a device).
int cuda_device_count();
// Why make_cuda_backend gives none: no CUDA in this build, or the CUDA runtime's own error (no
// device, a driver older than the runtime, ...), for the message of a run that asked for CUDA.
std::string cuda_unavailable_reason();
// The calling thread's CUDA device (-1 without CUDA), and making it another thread's: a run handed
// to a worker thread (counts side by side) runs on its caller's device, not on device 0.
int current_cuda_device();
void set_current_cuda_device(int device);


// Pair expressions on the GPU (cuda/expr/expression_runs.cpp): the expression's function compiled
// by NVRTC and linked by nvJitLink into the expression kernels at run time, cached on disk.
// Why this process cannot run them on its current CUDA device ("" when it can: a device, NVRTC and
// nvJitLink), what a run would do for its kernel (`dry`: nothing compiled), and the run itself,
// with the CPU's results bit for bit.
std::string expression_gpu_unavailable();
std::string expression_gpu_kernel(const expr::Compiled& c);
Result run_expression_gpu(const cpu::ExpressionPlan& plan);
// A matrix of a pair expression (matrix_run.cpp's job) on the GPU: blocks of rows computed by the
// generated kernel, two in flight, each handed to the sink (and mirrored, for A x A of a symmetric
// kernel) while the next one runs (returns the device's name); and the rows of a block when the job fixes none.
std::string run_matrix_gpu(const cpu::MatrixJob& job, MatrixSink& sink);
std::size_t matrix_gpu_block_rows(std::size_t rows, std::size_t cols);

}  // namespace twobody
