#pragma once
// Tensor-core histograms: equal-width bins in r over all pairs (Euclidean, unweighted, up to three
// dimensions), d² from the tensor-core counts' split-TF32 Gram form (tensor_count_tiles.cuh), so a
// pair costs its binning alone: the clamp, sqrt.approx, one FMA that yields both the slot and the
// distance to the nearest edge (counting_bounds.hpp, tensor_histogram_plan), and a shared-memory
// add (of 0 for a pair within the guard of an edge).
//
// The Gram form's error follows its largest addend, so the anchors are taken about their item's
// centre c (the points in Morton order: an item's 512 anchors lie close together) and the partners
// staged as b − c: the error then grows with the pair's distance, not with the data's extent, and
// the guard for an item of radius r is tensor_item_guard(r), computed on the device per item.
//
// Pairs within the guard are not counted in the hot loop. Their bits (16 a lane per block of 8
// partners, two blocks a word) go to the warp's queue in shared memory (one entry a lane per round,
// positions from a ballot), and when the queue may overflow, or at the end of the item, the warp
// settles them one a lane in float64.
#include <cstdint>

#include "twobody/detail/cuda/agent_choice.hpp"
#include "twobody/detail/exact/counting_bounds.hpp"
#include "twobody/detail/cuda/kernel_shape.hpp"
#include "twobody/detail/cuda/pair_output.cuh"
#include "twobody/detail/cuda/tensor_count_tiles.cuh"
#include "twobody/detail/exact/fast_path.hpp"

namespace twobody::cuda {

namespace tensor_histogram_detail {
// Block-wide reductions of N <= 6 values (min for the first `nmin`, max for the rest) over the
// warps, through s_red (a row of 6 a warp).
template <int N>
__device__ __forceinline__ void block_reduce(float (&v)[N], int nmin, float (*s_red)[6]) {
  static_assert(N >= 1 && N <= 6, "s_red holds six values a warp");
  const int lane = threadIdx.x % 32, warp = threadIdx.x / 32;
#pragma unroll
  for (int k = 0; k < N; ++k)
    for (int off = 16; off > 0; off >>= 1) {
      const float o = __shfl_xor_sync(0xffffffffu, v[k], off);
      v[k] = k < nmin ? fminf(v[k], o) : fmaxf(v[k], o);
    }
  if (lane == 0)
#pragma unroll
    for (int k = 0; k < N; ++k) s_red[warp][k] = v[k];
  __syncthreads();
#pragma unroll
  for (int k = 0; k < N; ++k) {
    float r = s_red[0][k];
    for (int w = 1; w < kThreads / 32; ++w) r = k < nmin ? fminf(r, s_red[w][k]) : fmaxf(r, s_red[w][k]);
    v[k] = r;
  }
  __syncthreads();  // s_red is reused
}

// The item's centre c (middle of its anchors' box, i0 .. i0 + 2·kThreads − 1) and radius (the
// largest |a − c|, rounded up), block-wide.
template <int D, class Proxy, class Exact>
__device__ __forceinline__ double item_centre_and_radius(const PairKernelArgs<Proxy, Exact>& args, std::uint32_t i0,
                                                         float (*s_red)[6], float (&c)[3]) {
  using tensor_detail::coordinates;
  const int tid = threadIdx.x;
  float box[6] = {HUGE_VALF, HUGE_VALF, HUGE_VALF, -HUGE_VALF, -HUGE_VALF, -HUGE_VALF};
  for (int r = 0; r < 2; ++r) {
    float x[3];
    const std::uint32_t i = i0 + r * kThreads + tid;
    coordinates<D>(args.A, i, x);
    if (i < args.A.n)
#pragma unroll
      for (int d = 0; d < 3; ++d) {
        box[d] = fminf(box[d], x[d]);
        box[3 + d] = fmaxf(box[3 + d], x[d]);
      }
  }
  block_reduce<6>(box, 3, s_red);
#pragma unroll
  for (int d = 0; d < D; ++d) c[d] = box[3 + d] >= box[d] ? __fmul_rn(0.5f, __fadd_rn(box[d], box[3 + d])) : 0.f;
  float far[1] = {0.f};  // max |a − c|²
  for (int r = 0; r < 2; ++r) {
    float x[3];
    const std::uint32_t i = i0 + r * kThreads + tid;
    coordinates<D>(args.A, i, x);
    double n2 = 0;
#pragma unroll
    for (int d = 0; d < D; ++d) {
      const double y = __fsub_rn(x[d], c[d]);
      n2 += y * y;
    }
    if (i < args.A.n) far[0] = fmaxf(far[0], __double2float_ru(n2));
  }
  block_reduce<1>(far, 0, s_red);
  return sqrt(static_cast<double>(far[0]));
}

// A warp's part of an item: its anchors w0 .. w0 + 63 (a1: MMA 1's fragments) against the staged
// sub-tile, two blocks of 8 partners at a time, binned by the item's guard, with the warp's queue
// of pairs within it.
template <int D, bool Clamp, class Proxy, class Exact>
struct TensorWarpItem {
  const PairKernelArgs<Proxy, Exact>& args;
  const TensorHistogramShape& shape;
  const float4* s_frag;
  unsigned* s_hist;
  uint2* s_queue;
  const std::uint32_t (&a1)[4][4];
  std::uint32_t w0, j1;
  int lane, g, t4, copies, lane_copy;
  int F;                         // the guard's fractional bits
  unsigned frac_mask;            // 2^F − 1
  unsigned stride, addr_base;    // the lane's byte address of slot bits v: (v >> F)·stride + addr_base
  unsigned two_h;                // the item's guard: 2h in units of 2^-F
  float cpos;                    // magic + h·2^-F
  float s_low;                   // s̃ below the first guarded edge is clamped onto it
  unsigned& queued;              // entries in this warp's queue (the same in every lane)
  unsigned long long& n_settled;

  // The warp settles its queue: one pair a lane, to its float64 bin in the lane's copy.
  __device__ __forceinline__ void drain() {
    settle_warp_queue<D, true>(args, shape, s_hist, copies, lane_copy, lane, s_queue, queued, n_settled);
  }

  // One pair: its slot and whether it lies within the guard of an edge. The shared add is
  // unconditional, of 0 for a pair within the guard or not wanted (a conditional one compiled to a
  // branch around it: ~7 instructions a pair more, measured by ncu).
  __device__ __forceinline__ void bin(float sq, int bit, bool wanted, unsigned& flags) const {
    sq = fmaxf(sq, s_low);
    if constexpr (Clamp) sq = fminf(sq, shape.s_above);
    const unsigned bits = __float_as_uint(__fmaf_rn(counting_detail::sqrt_approx(sq), shape.inv_width, cpos));
    const bool near = (bits & frac_mask) < two_h;
    if (wanted && near) flags |= 1u << bit;
    const unsigned addr = (bits >> F) * stride + addr_base;
    asm volatile("red.shared.add.u32 [%0], %1;" ::"r"(addr), "r"(wanted && !near ? 1u : 0u));
  }

  // Blocks nt0 and nt0 + 1 of the sub-tile at jt: their pairs binned; the lane's pairs within the
  // guard come back as bits 16·half + 4m + q (pair (m, q) of block nt0 + half).
  __device__ __forceinline__ unsigned bin_block_pair(std::uint32_t jt, int nt0) const {
    unsigned flags = 0;
#pragma unroll
    for (int half = 0; half < 2; ++half) {
      const std::uint32_t pb = jt + (nt0 + half) * 8;  // partners pb .. pb + 7
      // Warp-uniform: every partner at or below every anchor of the warp; some of them.
      if (args.is_auto && pb + 8 <= w0 + 1) continue;
      const bool diagonal = args.is_auto && pb <= w0 + 63;
      const float4 b = s_frag[(nt0 + half) * 32 + lane];
      float s[4][4];
#pragma unroll
      for (int m = 0; m < 4; ++m) {
        std::uint32_t a2[4];
        tensor_detail::second_fragments(a1[m], t4, a2);
        tensor_detail::gram_block(s[m], a1[m], a2, b);
      }
      if (!diagonal) {
#pragma unroll
        for (int m = 0; m < 4; ++m)
#pragma unroll
          for (int q = 0; q < 4; ++q) bin(s[m][q], 16 * half + 4 * m + q, true, flags);
      } else {
        // On the diagonal: j > i, real points only.
#pragma unroll
        for (int m = 0; m < 4; ++m)
#pragma unroll
          for (int q = 0; q < 4; ++q) {
            const std::uint32_t i = w0 + m * 16 + g + (q >> 1) * 8, j = pb + 2 * t4 + (q & 1);
            bin(s[m][q], 16 * half + 4 * m + q, i < args.A.n && j < j1 && j > i, flags);
          }
      }
    }
    return flags;
  }

  // Rare: the flagged pairs of blocks nt0, nt0 + 1 join the warp's queue, a round per pair of the
  // busiest lane.
  __device__ __forceinline__ void queue_flagged(unsigned flags, std::uint32_t jt, int nt0) {
    while (__any_sync(0xffffffffu, flags != 0u)) {
      if (queued + 32 > kSettleQueue) drain();
      const unsigned active = __ballot_sync(0xffffffffu, flags != 0u);
      if (flags) {
        const int bit = __ffs(flags) - 1;
        flags &= flags - 1;
        const int half = bit >> 4, m = (bit >> 2) & 3, q = bit & 3;
        const std::uint32_t i = w0 + m * 16 + g + (q >> 1) * 8;
        const std::uint32_t j = jt + (nt0 + half) * 8 + 2 * t4 + (q & 1);
        const unsigned below = __popc(active & ((1u << lane) - 1u));
        // Sentinels (ragged ends) are flagged only when the item settles every pair.
        s_queue[queued + below] = i < args.A.n && j < j1 ? make_uint2(i, j) : make_uint2(0xffffffffu, 0u);
      }
      queued += __popc(active);
    }
  }
};

}  // namespace tensor_histogram_detail

// Clamp: pairs (or sentinels) can fall outside the bins; else the first edge is 0, the last beyond
// the data's diameter, and no tile is ragged.
template <int D, bool Clamp, class Proxy, class Exact>
__global__ void __launch_bounds__(kThreads, 3)
    tensor_histogram_kernel(__grid_constant__ const PairKernelArgs<Proxy, Exact> args, const TensorHistogramShape shape) {
  static_assert(D >= 1 && D <= 3, "tensor-core histograms take up to three coordinates");
  using namespace tensor_detail;
  using namespace tensor_histogram_detail;
  __shared__ float4 s_frag[kThreads * 4];  // 32 blocks of 8 partners x 32 lanes
  __shared__ float s_red[kThreads / 32][6];
  __shared__ unsigned long long s_item;
  extern __shared__ __align__(16) unsigned char smem[];
  unsigned* s_hist = reinterpret_cast<unsigned*>(smem);  // (nbins + 2) x copies, bin-major
  const int tid = threadIdx.x, lane = tid % 32, warp = tid / 32;
  const int g = lane / 4, t4 = lane % 4;
  const int nslots = args.nbins + 2;
  const int copies = shape.copies;
  uint2* s_queue = reinterpret_cast<uint2*>(s_hist + ((nslots * copies + 1) & ~1)) + warp * kSettleQueue;
  for (int k = tid; k < nslots * copies; k += kThreads) s_hist[k] = 0;
  const int F = shape.guard.frac_bits;
  const unsigned frac_mask = (1u << F) - 1u;
  const int lane_copy = lane % copies;
  // The slot of v is (bits(v) >> F) − (bits(1.5·2^(23−F)) >> F) + 1; the lane's byte address of
  // it in one multiply-add (unsigned: wraps modulo 2^32 by definition, the sum is the address).
  const float magic_f = __uint_as_float((150u - static_cast<unsigned>(F)) << 23 | 0x400000u);  // 1.5·2^(23−F)
  const unsigned hist_addr = static_cast<unsigned>(__cvta_generic_to_shared(s_hist));
  const unsigned stride = 4u * static_cast<unsigned>(copies);
  const unsigned addr_base =
      hist_addr + 4u * static_cast<unsigned>(lane_copy) + (1u - (__float_as_uint(magic_f) >> F)) * stride;
  unsigned long long n_settled = 0;
  unsigned queued = 0;

  for (TileItem item; claim_tile_item(args, s_item, kTensorAnchors, item);) {
    const std::uint32_t i0 = item.i0, j0 = item.j0, j1 = item.j1;
    if (args.is_auto && j1 <= i0 + 1) continue;
    const std::uint32_t w0 = i0 + warp * 64;  // this warp's anchors: w0 .. w0 + 63

    float c[3] = {0.f, 0.f, 0.f};
    const double radius = item_centre_and_radius<D>(args, i0, s_red, c);
    const TensorItemGuard ig = tensor_item_guard(shape.guard, radius);
    // Pairs with s̃ below the first guarded edge are clamped onto it (and flagged): s_low.
    const bool settle_all = ig.h < 0;
    const unsigned two_h = settle_all ? frac_mask + 2u : 2u * static_cast<unsigned>(ig.h);
    const float cpos = settle_all ? shape.magic : __fadd_rn(shape.magic, ldexpf(static_cast<float>(ig.h), -F));
    // (Without Clamp the first edge is 0: s_below is 0.)
    const float s_low = ig.clamp_low ? __double2float_rn(ig.edge * ig.edge) : shape.s_below;

    std::uint32_t a1[4][4];  // MMA 2's come from these (second_fragments)
    warp_anchor_fragments<D>(args.A, w0, g, t4, c, 0.0, a1);
    TensorWarpItem<D, Clamp, Proxy, Exact> warp_item{.args = args,
                                                     .shape = shape,
                                                     .s_frag = s_frag,
                                                     .s_hist = s_hist,
                                                     .s_queue = s_queue,
                                                     .a1 = a1,
                                                     .w0 = w0,
                                                     .j1 = j1,
                                                     .lane = lane,
                                                     .g = g,
                                                     .t4 = t4,
                                                     .copies = copies,
                                                     .lane_copy = lane_copy,
                                                     .F = F,
                                                     .frac_mask = frac_mask,
                                                     .stride = stride,
                                                     .addr_base = addr_base,
                                                     .two_h = two_h,
                                                     .cpos = cpos,
                                                     .s_low = s_low,
                                                     .queued = queued,
                                                     .n_settled = n_settled};

    for (std::uint32_t jt = first_wanted_subtile(args.is_auto, i0, j0); jt < j1; jt += kThreads) {
      __syncthreads();
      stage_partner_fragments<D>(args.B, jt, j1, c, s_frag);
      __syncthreads();
#pragma unroll 1
      for (int nt0 = 0; nt0 < kThreads / 8; nt0 += 2) warp_item.queue_flagged(warp_item.bin_block_pair(jt, nt0), jt, nt0);
    }
    if (queued) warp_item.drain();

    // 32-bit shared counters hold at most kTensorAnchors x kChunk = 2^21 pairs: flushed every item.
    flush_histogram_copies(args, s_hist, nslots, copies);
  }

  for (int off = 16; off > 0; off >>= 1) n_settled += __shfl_down_sync(0xffffffffu, n_settled, off);
  if (lane == 0 && n_settled) atomicAdd(args.settled, n_settled);
}

// The TF32 tensor-core histogram (launch: agent_launch.cuh's AgentLaunch), over anchors in Morton
// order.
template <int D, class P, class F, class Launch>
void launch_tensor_histogram(const AgentChoice& c, Launch& launch) {
  launch(c.thist_clamp ? tensor_histogram_kernel<D, true, P, F> : tensor_histogram_kernel<D, false, P, F>, kThreads, c.smem,
         "tensor_histogram_kernel", c.thist);
}

}  // namespace twobody::cuda
