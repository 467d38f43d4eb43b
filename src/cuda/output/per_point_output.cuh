#pragma once
// reduce::PerPoint on the GPU: one range as for a count. Each anchor's partners in range are
// counted (and their weights summed) in registers, one slot per anchor a thread holds, and added
// to the global 64-bit array once per tile or unit (flush_anchors); each partner's go to the
// global array by atomics, lanes that add to the same partner at once adding together.
//
// AnchorSlots: anchors a thread holds at once: 1 for the grid agent, kPerThread for the
// brute-force one, whose thread holds anchors i0 + r·kThreads + tid (i0 a multiple of kAnchors),
// so that anchor i is in slot (i / kThreads) % kPerThread.
#include "twobody/detail/cuda/output/output_common.cuh"

namespace twobody::cuda {

template <int D, bool Weighted, class Proxy, class Exact, int AnchorSlots>
struct PerPointOutput : OutputCommon<PerPointOutput<D, Weighted, Proxy, Exact, AnchorSlots>, D, Proxy, Exact> {
  static_assert(AnchorSlots == 1 || AnchorSlots == kPerThread, "anchor slots: the grid's one or the tiles' kPerThread");
  using Common = OutputCommon<PerPointOutput, D, Proxy, Exact>;
  using Common::args;
  // Each anchor slot's partners in range since its last flush (< 2^32: a tile holds kChunk
  // partners, a grid unit at most the partner set), and their weights.
  unsigned a_count[AnchorSlots] = {};
  __int128 a_wsum[Weighted ? AnchorSlots : 1] = {};  // exact sums (exact_sum_atomics.cuh)

  __device__ PerPointOutput(const PairKernelArgs<Proxy, Exact>& a, unsigned char*, int, int, int = 1)
      : Common(a, a.range_lo0) {}

  __device__ __forceinline__ int classify(float s) const { return this->classify_range(s); }
  __device__ __forceinline__ bool quick(float s, std::uint32_t i, std::uint32_t j, double wprod, int = -1) {
    return this->quick_range(s, i, j, wprod);
  }
  __device__ __forceinline__ void accept(int, std::uint32_t i, std::uint32_t j, double, int = -1) { count_point(i, j); }

  // One pair in range. The anchor's slot is chosen by a compare per slot, not an index, so that
  // the slots stay in registers; the partner's entry is added to at once, by one lane for all the
  // lanes of the warp that add to the same partner now (a shuffled or shared partner meets every
  // anchor of the warp together).
  __device__ __forceinline__ void count_point(std::uint32_t i, std::uint32_t j) {
    const int slot = AnchorSlots == 1 ? 0 : static_cast<int>(i / kThreads) % AnchorSlots;
#pragma unroll
    for (int q = 0; q < AnchorSlots; ++q) {
      if (q == slot) {
        ++a_count[q];
        if constexpr (Weighted) a_wsum[q] += grid_steps(args.point_grid, args.B.w[j]);
      }
    }
    const unsigned peers = __match_any_sync(__activemask(), j);
    if (static_cast<int>(threadIdx.x % 32) == __ffs(peers) - 1)
      atomicAdd(&args.point_counts_b[j], static_cast<unsigned long long>(__popc(peers)));
    if constexpr (Weighted) add_steps(&args.point_wsums_b[j], grid_steps(args.point_grid, args.A.w[i]));
  }
  // The anchors' counts (and sums) to the global arrays, then cleared; anchors[q] is slot q's
  // anchor (a slot without pairs has no anchor to add to). Per tile or unit.
  __device__ __forceinline__ void flush_anchors(const std::uint32_t* anchors) {
#pragma unroll
    for (int q = 0; q < AnchorSlots; ++q) {
      if (a_count[q] == 0) continue;
      atomicAdd(&args.point_counts_a[anchors[q]], static_cast<unsigned long long>(a_count[q]));
      a_count[q] = 0;
      if constexpr (Weighted) {
        if (a_wsum[q] != 0) add_sum(&args.point_wsums_a[anchors[q]], a_wsum[q]);
        a_wsum[q] = 0;
      }
    }
  }
};

}  // namespace twobody::cuda
