#pragma once
// What every agent's kernel receives: the two point sets on the device, the proxy and the exact
// rule, the guard bands and bin table, and the outputs' arrays; and the float64 rule that settles
// a pair, in one place.
#include <concepts>
#include <cstdint>

#include "twobody/detail/cuda/kernel_shape.hpp"
#include "twobody/detail/cuda/output/exact_sum_atomics.cuh"
#include "twobody/detail/cuda/pair_pool.hpp"
#include "twobody/detail/exact/fast_path.hpp"
#include "twobody/pair_force.hpp"

namespace twobody::cuda {

struct DeviceSet {
  const float* x[kMaxDim];
  const double* x64[kMaxDim];
  const double* w;
  const std::int32_t* region;  // jackknife labels (Statistic::regions), else null
  std::uint32_t n;
};

// A 192-bit exact sum (WideSum's range: a close contact's force terms exceed 2^63 steps), three
// 64-bit words of a two's complement integer, low word first.
struct DeviceWideSum {
  unsigned long long w[3];
};

// Forces (reduce::PointSums, output/point_sums_output.cuh): the potential, the box, the grids and
// the arrays, in the traversal's point order: per point D + 1 sums (the force's components, then
// the energy); the run's energy and virial; the first pair closer than the closest separation
// (a flag, its two points and r²'s bits).
struct PointSumsArgs {
  bool coulomb = false;
  LennardJonesTerms lj_terms;
  CoulombSwitchedTerms coulomb_terms;
  bool periodic = false;
  double length[3] = {0, 0, 0}, half[3] = {0, 0, 0};
  double closest2 = 0;
  DeviceSumGrid force, energy, virial;
  DeviceWideSum* sums_a = nullptr;
  DeviceWideSum* sums_b = nullptr;
  DeviceWideSum* totals = nullptr;
  unsigned long long* too_close = nullptr;
};

template <class Proxy, class Exact>
struct PairKernelArgs {
  DeviceSet A, B;
  bool is_auto;
  Proxy proxy;
  Exact exact;
  // Range classification (Reduce, PairList): bands of the two edges.
  float range_lo0, range_hi0, range_lo1, range_hi1;
  // Table classification (Histogram).
  const BandPair* bands;  // nbins + 1
  const std::uint16_t* cells;
  int ncells;
  float lo0;
  std::uint32_t base_bits, top_bits;
  int shift;
  bool direct;  // the table's entries decide most pairs (direct_lookup) rather than the band walk
  const double* edges64;  // nbins + 1 key edges, for settling
  int nbins, steps, copies, hist_stride;
  unsigned long long* counts;   // nbins (Reduce: 1)
  DeviceFixedSum* wsums;        // nbins, when weighted: exact sums (exact_sum_atomics.cuh)
  unsigned long long* settled;  // pairs re-evaluated in float64
  unsigned long long* next_item;
  unsigned long long n_items;
  std::uint32_t chunks_per_row;
  // Pair lists: the output buffer and the launch's units (pair_pool.hpp).
  PairListBuffer list;
  // Jackknife regions (Regions kernels): regions x nbins counts (and weighted sums) of the pairs
  // with at least one point in the region.
  int regions;
  unsigned long long* region_counts;
  DeviceFixedSum* region_wsums;
  // Per-point reductions (PerPoint), in the traversal's point order: per point of the anchors' set
  // (a) and of the partners' set (b; the same arrays for auto), its partners in range and, when
  // weighted, the sum of their weights.
  unsigned long long* point_counts_a;
  unsigned long long* point_counts_b;
  DeviceFixedSum* point_wsums_a;
  DeviceFixedSum* point_wsums_b;
  // Mean separations (Means kernels): per bin Σ w s and Σ w log s; summed per block in shared
  // memory first when sums_shared.
  DeviceFixedSum* sep_sums;
  DeviceFixedSum* log_sep_sums;
  bool sums_shared;
  // The run's grids for those sums (Plan::grids): w_i w_j, w_j, w_i w_j s, w_i w_j log s.
  DeviceSumGrid pair_grid, point_grid, sep_grid, log_grid;
  // Binned pair functions: the counts (weighted sums, region counts) added to the global arrays
  // pair by pair, no sub-histograms in shared memory.
  bool hist_global;
  // Forces: per-point vector sums (their partners' counts in point_counts_a, point_counts_b).
  PointSumsArgs forces;
};

// A binned pair function (binned_pair_functions.hpp: RpPiBins, SMuBins and the mock variants) gives a pair's
// flat bin in float64 itself, instead of a key that edges bin.
template <class Exact>
concept binned_pair_function = requires(const Exact& e, const double* p) {
  { e.bin(p, p) } -> std::convertible_to<int>;
};

// Pair (i, j)'s float64 coordinates handed to `rule` (the one place that loads them).
template <int D, class Proxy, class Exact, class Rule>
__device__ __forceinline__ auto on_float64(const PairKernelArgs<Proxy, Exact>& args, std::uint32_t i, std::uint32_t j,
                                           Rule rule) {
  double a64[D], b64[D];
#pragma unroll
  for (int d = 0; d < D; ++d) {
    a64[d] = args.A.x64[d][i];
    b64[d] = args.B.x64[d][j];
  }
  return rule(a64, b64);
}

// The float64 key of pair (i, j) from the sets' float64 coordinates: the rule every settlement
// applies.
template <int D, class Proxy, class Exact>
__device__ __forceinline__ double float64_key(const PairKernelArgs<Proxy, Exact>& args, std::uint32_t i, std::uint32_t j) {
  return on_float64<D>(args, i, j, [&](const double* a, const double* b) { return args.exact.key(a, b); });
}

// The float64 bin of pair (i, j) by a binned pair function.
template <int D, class Proxy, class Exact>
__device__ __forceinline__ int float64_bin(const PairKernelArgs<Proxy, Exact>& args, std::uint32_t i, std::uint32_t j) {
  return on_float64<D>(args, i, j, [&](const double* a, const double* b) { return args.exact.bin(a, b); });
}

}  // namespace twobody::cuda
