#pragma once
// What the counting tiles' count (counting_tiles_count.cuh) and histograms (counting_tiles.cuh,
// and the FP64 tensor-core histograms) share: the sentinels, the float32 pair arithmetic, the
// work items and the float64 bin of an equal-width histogram.
#include <cstdint>

#include "twobody/detail/cuda/agent_choice.hpp"
#include "twobody/detail/cuda/kernel_shape.hpp"
#include "twobody/detail/cuda/pair_output.cuh"
#include "twobody/detail/exact/fast_path.hpp"

namespace twobody::cuda {

constexpr float kRoundingMagic = 12582912.0f;  // 1.5·2²³: adding it rounds to an integer in the low bits
// Sentinels at infinity, whatever the data's scale: count: s' = +inf (outside, far from the band);
// histogram: partners at +inf and anchors at −inf, so every sentinel pair has d² = +inf (never
// NaN), which the clamp sends to the slot beyond the last bin.
constexpr float kFarNorm = __builtin_huge_valf();        // count sentinels' |b|² or |a|² − T
constexpr float kFarCoordinate = __builtin_huge_valf();  // histogram sentinels' coordinate (±)

namespace counting_detail {
// The same arithmetic everywhere (hot loop, revisits, diagonal tiles): explicit roundings, so a
// revisit recomputes the hot loop's very value.
template <int D>
__device__ __forceinline__ float gram(const float (&a)[3], float ca, float4 b) {
  float s = __fadd_rn(ca, b.w);
  s = __fmaf_rn(a[0], b.x, s);
  if constexpr (D > 1) s = __fmaf_rn(a[1], b.y, s);
  if constexpr (D > 2) s = __fmaf_rn(a[2], b.z, s);
  return s;
}
template <int D>
__device__ __forceinline__ float squared(const float (&a)[3], float4 b) {
  const float dx = __fsub_rn(a[0], b.x);
  float s = __fmul_rn(dx, dx);
  if constexpr (D > 1) {
    const float dy = __fsub_rn(a[1], b.y);
    s = __fmaf_rn(dy, dy, s);
  }
  if constexpr (D > 2) {
    const float dz = __fsub_rn(a[2], b.z);
    s = __fmaf_rn(dz, dz, s);
  }
  return s;
}
__device__ __forceinline__ float sqrt_approx(float s) {
  float d;
  asm("sqrt.approx.ftz.f32 %0, %1;" : "=f"(d) : "f"(s));
  return d;
}
// Histogram: d' = d − lo (clamped), whose product with 1/w is the position q in bins.
template <bool Clamp>
__device__ __forceinline__ float bin_distance(float s, const CountingTilesShape& g) {
  float d = sqrt_approx(s);
  if constexpr (Clamp) d = fminf(fmaxf(__fadd_rn(d, -g.lo), g.d_min), g.d_max);
  return d;
}
// bits(v) − bits(magic) = ⌊q⌋ (the slot less one: slot 0 below the first edge, nbins + 1 beyond).
__device__ __forceinline__ unsigned slot_bits(float d, const CountingTilesShape& g) {
  return __float_as_uint(__fmaf_rd(d, g.inv_width, kRoundingMagic));
}
// >= guard_limit when q lies within δ of an edge.
__device__ __forceinline__ unsigned guard_bits(float d, const CountingTilesShape& g) {
  return __float_as_uint(__fmaf_rn(d, g.guard_scale, g.guard_lo)) ^ __float_as_uint(__fmaf_rn(d, g.guard_scale, g.guard_hi));
}
}  // namespace counting_detail

// The counting kernels' work queue (counting tiles, tensor-core counts): the block claims the next
// item (thread 0, between barriers), whose anchors start at i0 (`anchors` a row of items) and
// whose partners are [j0, j1); false when the queue is empty.
struct TileItem {
  std::uint32_t i0, j0, j1;
};
template <class Args>
__device__ __forceinline__ bool claim_tile_item(const Args& args, unsigned long long& s_item, std::uint32_t anchors,
                                                TileItem& item) {
  __syncthreads();
  if (threadIdx.x == 0) s_item = atomicAdd(args.next_item, 1ull);
  __syncthreads();
  if (s_item >= args.n_items) return false;
  item.i0 = static_cast<std::uint32_t>(s_item / args.chunks_per_row) * anchors;
  item.j0 = static_cast<std::uint32_t>(s_item % args.chunks_per_row) * kChunk;
  item.j1 = min(item.j0 + kChunk, args.B.n);
  return true;
}

// Pair (i, j)'s float64 bin among edges of equal width (the bin from the distance, checked against
// the float64 edges), or -1 outside the bins: the settlement of the equal-width histograms
// (counting tiles, tensor-core histograms).
template <int D, class Proxy, class Exact>
__device__ __forceinline__ int equal_width_float64_bin(const PairKernelArgs<Proxy, Exact>& args, double lo64,
                                                    double inv_width64, std::uint32_t i, std::uint32_t j) {
  const double key = float64_key<D>(args, i, j);
  const double* e = args.edges64;
  if (!(key >= e[0]) || !(key < e[args.nbins])) return -1;
  int k = static_cast<int>(floor((sqrt(key) - lo64) * inv_width64));
  k = ::min(::max(k, 0), args.nbins - 1);
  while (key < e[k]) --k;
  while (key >= e[k + 1]) ++k;
  return k;
}

}  // namespace twobody::cuda
