#pragma once
#include <cstdint>
#include <memory>
#include <new>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include "twobody/exact_sums.hpp"
#include "twobody/statistic.hpp"

namespace twobody {

// Leaves new elements default-initialised (for double: not written). resize() of a dense matrix of
// gigabytes then touches no page: the backend writes every element anyway, and on the H100 host
// a zero fill of 4.3 GB took 2.2–2.7 s on one thread, 30 times the GPU's fill of it.
// Blocks of 32 MiB and more are mapped on their own and advised to transparent huge pages, so a
// matrix's first touch faults 2 MiB at a time: 512 times fewer faults (an 800 MB matrix written
// from a GPU's blocks spent most of its host time in 4 KiB page faults).
namespace detail {
void* allocate_values(std::size_t bytes);
void free_values(void* p, std::size_t bytes) noexcept;
}  // namespace detail

template <class T>
struct DefaultInitAllocator : std::allocator<T> {
  template <class U>
  struct rebind {
    using other = DefaultInitAllocator<U>;
  };
  DefaultInitAllocator() = default;
  T* allocate(std::size_t n) {
    if (n > static_cast<std::size_t>(-1) / sizeof(T)) throw std::bad_array_new_length();
    return static_cast<T*>(detail::allocate_values(n * sizeof(T)));
  }
  void deallocate(T* p, std::size_t n) noexcept { detail::free_values(p, n * sizeof(T)); }
  template <class U>
  DefaultInitAllocator(const DefaultInitAllocator<U>&) noexcept {}
  template <class U>
  void construct(U* p) noexcept(std::is_nothrow_default_constructible_v<U>) {
    ::new (static_cast<void*>(p)) U;
  }
  template <class U, class... Args>
  void construct(U* p, Args&&... args) {
    ::new (static_cast<void*>(p)) U(std::forward<Args>(args)...);
  }
};
using MatrixValues = std::vector<double, DefaultInitAllocator<double>>;

struct PairRecord {
  std::uint64_t i;
  std::uint64_t j;
  double value;  // natural variable: r, or θ in degrees
};

// The order of pair lists: by (i, j).
inline bool pair_order(const PairRecord& x, const PairRecord& y) { return x.i != y.i ? x.i < y.i : x.j < y.j; }

// OutputKind::PerPoint: per point of one set, in the caller's order, its partners with value in
// [lo, hi) and, when weighted, the sum of their weights (statistic.hpp states whose). A per-point
// sum of a pair value (Σ_j f(r_ij), a cutoff potential) would be a third array beside these,
// filled where the backends have each pair's float64 key.
struct PointReductions {
  std::vector<std::uint64_t> counts;
  std::vector<double> weighted;  // when weighted
  std::vector<double> values;    // reduce::PerPointValue: the partners' values summed, or least, or largest
  // reduce::PointSums: n × components, row-major: the force's D components, then the energy.
  std::vector<double> sums;
  std::size_t components = 0;
};

// OutputKind::Nearest (reduce::Nearest): per point of the first set, its k nearest partners,
// nearest first, row-major n x k. Ordered by (float64 key, partner index): the key is what the
// pair is decided on (for distances, the square), so equal distances whose keys differ keep the
// keys' order and exact ties go to the smaller index.
struct NearestLists {
  int k = 0;
  std::vector<std::uint64_t> index;  // partner indices
  std::vector<double> key;           // their float64 keys
  std::vector<double> value;         // their natural values (distance, or cosine distance)
};

// One worker of a hybrid run (RunOptions::backend "hybrid"): the GPU, which takes bands of work
// from the heavy end of one queue, or the CPU team, which takes them from the light end.
struct WorkerShare {
  std::string name;            // "cuda: <device>", "cpu: N threads", ...
  std::uint64_t bands = 0;     // takes from the queue
  std::uint64_t rows = 0;      // first-set rows its bands anchored (points: of its slab pairs)
  std::uint64_t pairs = 0;     // pairs it evaluated
  double seconds = 0;          // busy: the sum of its bands' times
};

struct RunInfo {
  std::string backend;
  std::string device;
  int threads = 0;
  std::size_t n_a = 0, n_b = 0;      // points in the first and (cross) second set
  double seconds = 0;                // kernel wall time, excluding file parsing
  std::uint64_t pairs_evaluated = 0;  // distinct pairs whose value was computed
  std::uint64_t pairs_settled_fp64 = 0;  // fast path: pairs re-evaluated in float64 near an edge
  std::string plan;                  // the planner's explanation
  // Hybrid runs: each worker's share, and the load imbalance |T_gpu - T_cpu| / max(T_gpu, T_cpu)
  // of their busy seconds (with more workers, (max - min) / max); empty and 0 otherwise.
  std::vector<WorkerShare> workers;
  double load_imbalance = 0;
};

struct Result {
  OutputKind output = OutputKind::Histogram;
  std::vector<std::uint64_t> counts;  // Histogram: one per bin; Reduction: one
  std::vector<double> weighted;       // sums of w_i w_j beside counts, when weighted
  // Statistic::regions > 0 (seed 003's inverse jackknives): T[r][k] at [r * nbins + k], the pairs
  // of bin k with at least one point in region r (a pair within one region is counted once there,
  // a pair across two regions in both), and their weighted sums when weighted. The histogram
  // without region r is counts[k] − T[r][k].
  std::size_t regions = 0;
  std::vector<std::uint64_t> region_counts;
  std::vector<double> region_weighted;
  // Statistic::mean_separation: per bin, Σ s and Σ log s of its pairs (times w_i w_j when weighted).
  std::vector<double> separation_sum, log_separation_sum;
  std::vector<double> value_sum;      // reduce::Sum: the values' sum (counts[0]: how many)
  std::vector<double> totals;         // reduce::PointSums: {total energy, virial Σ d·F}
  std::vector<PairRecord> pairs;      // PairList, sorted by (i, j); empty with RunOptions::pair_sink
  // PerPoint: per point of the first set and, cross only, of the second (empty for auto).
  PointReductions per_point_a, per_point_b;
  // The sums above kept exactly (twobody/exact_sums.hpp): every float64 sum is its entry there
  // rounded once, so it is the same on any number of threads, chunks or MPI ranks.
  ExactSums exact;
  NearestLists nearest;               // Nearest
  MatrixValues matrix;                // Matrix, row-major rows x cols
  std::size_t rows = 0, cols = 0;
  RunInfo info;

  double pairs_per_second() const {
    return info.seconds > 0 ? static_cast<double>(info.pairs_evaluated) / info.seconds : 0.0;
  }
};

}  // namespace twobody
