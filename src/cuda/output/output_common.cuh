#pragma once
// What every reduction's device output shares (pair_output.cuh picks the reduction's own): the
// pair-function arguments, the four range thresholds, the float64 settlement and its count, and
// the hooks a traversal calls that only some reductions need (no-ops here).
//
// Derived: the reduction's output type (CRTP), whose classify and accept resolve() calls.
#include <cstdint>

#include "twobody/detail/cuda/kernel_shape.hpp"
#include "twobody/detail/cuda/pair_kernel_args.cuh"
#include "twobody/detail/engine/binned_pair_functions.hpp"
#include "twobody/detail/exact/fast_path.hpp"

namespace twobody::cuda {

template <class Derived, int D, class Proxy, class Exact>
struct OutputCommon {
  static constexpr bool kBinned = binned_pair_function<Exact>;
  // Counts alone (histograms only): a certain table entry is the whole of a pair's worth.
  static constexpr bool kCountsOnly = false;
  const PairKernelArgs<Proxy, Exact>& args;
  float lo0, hi0, lo1, hi1;
  unsigned long long n_settled = 0;

  __device__ OutputCommon(const PairKernelArgs<Proxy, Exact>& a, float lo)
      : args(a), lo0(lo), hi0(a.range_hi0), lo1(a.range_lo1), hi1(a.range_hi1) {}

  // A range's float32 verdict: 0 inside, -1 outside, -2 within a band (settled in float64).
  __device__ __forceinline__ int classify_range(float s) const {
    const bool in = (s >= hi0) & (s < lo1);
    const bool near = (s >= lo0) & (s < hi1);
    return in ? 0 : (near ? -2 : -1);
  }
  // A range's fast verdict: pairs certainly inside accepted; false for those within a band.
  __device__ __forceinline__ bool quick_range(float s, std::uint32_t i, std::uint32_t j, double wprod) {
    const bool in = (s >= hi0) & (s < lo1);
    if (in) self().accept(0, i, j, wprod);
    return in || !((s >= lo0) & (s < hi1));
  }

  // The float64 rule, for pairs inside a guard band (binned pair functions: every pair in reach).
  __device__ __forceinline__ int settle(std::uint32_t i, std::uint32_t j) {
    ++n_settled;
    if constexpr (kBinned) return float64_bin<D>(args, i, j);
    else return find_bin_unpadded(args.edges64, args.nbins, args.steps, float64_key<D>(args, i, j));
  }
  // The slow path: the band walk, then float64 inside a band.
  __device__ __forceinline__ void resolve(float s, std::uint32_t i, std::uint32_t j, double wprod, int rb = -1) {
    int k = self().classify(s);
    if (k == -2) k = settle(i, j);
    if (k >= 0) self().accept(k, i, j, wprod, rb);
  }

  // Hooks of other reductions, called by every traversal: nothing to do here.
  // Histograms (counts only): nothing is certain from a table entry, every pair is resolved.
  __device__ __forceinline__ std::uint32_t lookup(float) const { return kUncertain; }
  __device__ __forceinline__ bool count_certain(std::uint32_t) { return true; }
  // Pair lists: a task is its unit, never stopped.
  __device__ __forceinline__ unsigned long long begin_task(unsigned long long k, int) { return k; }
  __device__ __forceinline__ bool list_stopped() const { return false; }
  __device__ void record_stopped(unsigned long long, const unsigned long long* = nullptr) const {}
  __device__ __forceinline__ void emit_hits(unsigned, std::uint32_t, std::uint32_t) {}
  // Per-point reductions: no anchor sums to flush.
  __device__ __forceinline__ void flush_anchors(const std::uint32_t*) {}
  // Histograms: no shared sub-histograms, regions or sums.
  __device__ __forceinline__ void begin_unit(int) {}
  __device__ void end_unit() {}
  __device__ void flush_block(int, int) {}
  __device__ void flush_warp(int) {}
  __device__ void flush_weights(int, int) {}
  __device__ void flush_regions(int, int) {}

  // The settled pairs' count: warp sums, then one atomic per warp (all lanes of every warp).
  __device__ void finish(int tid) {
    for (int off = 16; off > 0; off >>= 1) n_settled += __shfl_down_sync(0xffffffffu, n_settled, off);
    if (tid % 32 == 0 && n_settled) atomicAdd(args.settled, n_settled);
  }

 private:
  __device__ __forceinline__ Derived& self() { return static_cast<Derived&>(*this); }
};

}  // namespace twobody::cuda
