#pragma once
// reduce::Count on the GPU (type I): the pairs in one range, and their weights (an exact sum on
// the run's grid, exact_sum_atomics.cuh), summed in registers and added to the global total once
// per warp at the end.
#include "twobody/detail/cuda/output/output_common.cuh"

namespace twobody::cuda {

template <int D, bool Weighted, class Proxy, class Exact>
struct CountOutput : OutputCommon<CountOutput<D, Weighted, Proxy, Exact>, D, Proxy, Exact> {
  using Common = OutputCommon<CountOutput, D, Proxy, Exact>;
  using Common::args;
  using Common::n_settled;
  unsigned long long r_count = 0;
  __int128 r_wsum = 0;

  __device__ CountOutput(const PairKernelArgs<Proxy, Exact>& a, unsigned char*, int, int, int = 1)
      : Common(a, a.range_lo0) {}

  __device__ __forceinline__ int classify(float s) const { return this->classify_range(s); }
  __device__ __forceinline__ bool quick(float s, std::uint32_t i, std::uint32_t j, double wprod, int = -1) {
    return this->quick_range(s, i, j, wprod);
  }
  __device__ __forceinline__ void accept(int, std::uint32_t, std::uint32_t, double wprod, int = -1) {
    ++r_count;
    if constexpr (Weighted) r_wsum += grid_steps(args.pair_grid, wprod);
  }

  // Per-thread totals: warp sums, then one atomic per warp (all lanes of every warp call this).
  __device__ void finish(int tid) {
    for (int off = 16; off > 0; off >>= 1) {
      n_settled += __shfl_down_sync(0xffffffffu, n_settled, off);
      r_count += __shfl_down_sync(0xffffffffu, r_count, off);
      if constexpr (Weighted) {
        const auto lo = __shfl_down_sync(0xffffffffu, static_cast<unsigned long long>(r_wsum), off);
        const auto hi = __shfl_down_sync(0xffffffffu, static_cast<unsigned long long>(static_cast<unsigned __int128>(r_wsum) >> 64), off);
        r_wsum += static_cast<__int128>((static_cast<unsigned __int128>(hi) << 64) | lo);
      }
    }
    if (tid % 32 == 0) {
      if (n_settled) atomicAdd(args.settled, n_settled);
      if (r_count) atomicAdd(&args.counts[0], r_count);
      if constexpr (Weighted)
        if (r_wsum != 0) add_sum(&args.wsums[0], r_wsum);
    }
  }
};

}  // namespace twobody::cuda
