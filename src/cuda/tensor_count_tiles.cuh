#pragma once
// Tensor-core counts: the counting tiles' Gram form s' = (|a|² − T) + |b|² − 2a·b (one range,
// Euclidean, unweighted, up to three dimensions) with the products on the tensor cores, so that
// a pair costs its verdict only (one LEA.HI for the sign bit, one FMNMX for the group's smallest
// |s'|) instead of the add and three FMAs before it.
//
// TF32 keeps 11 significant bits, so every operand is split, x = hi + lo (hi = tf32(x), lo =
// tf32(x − hi), x − hi exact), and the dot product is hi·hi + lo·hi + hi·lo (lo·lo, 2^-22 of it,
// dropped), with |a|² − T and |b|² split the same way and folded into the K dimension. Two
// mma.m16n8k8 per 16 anchors × 8 partners:
//   MMA 1: A = [−2x_hi, −2y_hi, −2z_hi, −2x_lo, −2y_lo, −2z_lo, ca_hi, ca_lo]
//          B = [ x_hi,   y_hi,   z_hi,   x_hi,   y_hi,   z_hi,  1,     1    ]
//   MMA 2: A = [−2x_hi, −2y_hi, −2z_hi, −2x_lo, 1,     1,     0, 0]   (accumulating onto MMA 1)
//          B = [ x_lo,   y_lo,   z_lo,   0,      cb_hi, cb_lo, 0, 0]
// MMA 2's first four columns of A are MMA 1's (its fourth meets a zero of B), and its last four
// the same in every row: so its A fragments are MMA 1's first two registers and one constant a
// lane, and an anchor tile costs 4 registers, not 8 (with 8, ptxas spilled and reloaded two of
// them from local memory for every block of 8 partners at three blocks an SM).
// Its error (counting_bounds.hpp, tensor_gram_error) is ~20× the CUDA-core form's, still far
// below r² for the usual cutoffs; pairs within it are settled in float64 as in the counting tiles.
//
// A block of 8 warps takes items of kTensorAnchors = 512 anchors (64 a warp: four 16-row tiles,
// their A fragments in 16 registers) × kChunk partners, staged 256 at a time in shared memory
// already in the B fragments' layout (one 16-byte load a lane per 8 partners). Each lane holds 16
// of the 512 pairs of a warp's 64 × 8 block; after each block of 8 partners a lane whose smallest
// |s'| lies within the band revisits its own 16, still in registers. Blocks straddling the
// diagonal of an auto-correlation count only j > i, pair by pair.
#include <cuda_fp16.h>

#include <cstdint>

#include "twobody/detail/cuda/agent_choice.hpp"
#include "twobody/detail/cuda/counting_tiles.cuh"
#include "twobody/detail/cuda/kernel_shape.hpp"
#include "twobody/detail/cuda/pair_output.cuh"
#include "twobody/detail/exact/fast_path.hpp"

namespace twobody::cuda {

// Sentinels (points beyond a ragged end): |a|² − T or |b|² of 2^122, finite (no inf·0 in the
// MMAs) and above any |a|² − T the plan admits (extent + T < 2^120), so s' > 0: never counted, never
// in a band.
constexpr float kTensorFar = 0x1p+122f;

namespace tensor_detail {
__device__ __forceinline__ float tf32(float x) {
  std::uint32_t r;
  asm("cvt.rna.tf32.f32 %0, %1;" : "=r"(r) : "f"(x));
  return __uint_as_float(r);
}
// x = hi + lo + (at most 2^-22 |x|): hi rounded to TF32, x − hi exact (Sterbenz), lo rounded.
__device__ __forceinline__ void split(float x, float& hi, float& lo) {
  hi = tf32(x);
  lo = tf32(__fsub_rn(x, hi));
}
__device__ __forceinline__ void mma_tf32(float (&d)[4], const std::uint32_t (&a)[4], float b0, float b1) {
  asm(
      "mma.sync.aligned.m16n8k8.row.col.f32.tf32.tf32.f32 {%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, {%0,%1,%2,%3};"
      : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3])
      : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(__float_as_uint(b0)), "r"(__float_as_uint(b1)));
}
__device__ __forceinline__ float pick(const float (&v)[8], int k) {
  float r = v[0];
#pragma unroll
  for (int q = 1; q < 8; ++q) r = k == q ? v[q] : r;
  return r;
}
// An anchor's rows of MMA 1 and MMA 2 from its coordinates x (a sentinel when not `real`).
template <int D>
__device__ __forceinline__ void anchor_rows(const float (&x)[3], bool real, double t_hi, float (&r1)[8], float (&r2)[8]) {
  float h[3] = {0.f, 0.f, 0.f}, l[3] = {0.f, 0.f, 0.f};
  float ca = kTensorFar;
  if (real) {
    double na = 0;
#pragma unroll
    for (int d = 0; d < D; ++d) {
      na += static_cast<double>(x[d]) * x[d];
      split(x[d], h[d], l[d]);
    }
    ca = static_cast<float>(na - t_hi);
  }
  float ch, cl;
  split(ca, ch, cl);
#pragma unroll
  for (int d = 0; d < 3; ++d) {
    r1[d] = -2.f * h[d];
    r1[3 + d] = -2.f * l[d];
    r2[d] = -2.f * h[d];
  }
  r1[6] = ch;
  r1[7] = cl;
  r2[3] = r1[3];
  r2[4] = r2[5] = 1.f;
  r2[6] = r2[7] = 0.f;
}
// MMA 2's A fragments from MMA 1's: columns t4 (rows g, g + 8) the same, columns t4 + 4 the
// constants [1, 1, 0, 0] of every row.
__device__ __forceinline__ void second_fragments(const std::uint32_t (&a1)[4], int t4, std::uint32_t (&a2)[4]) {
  a2[0] = a1[0];
  a2[1] = a1[1];
  a2[2] = a2[3] = __float_as_uint(t4 < 2 ? 1.f : 0.f);
}
// A partner's column of MMA 1 and MMA 2 (a sentinel when not `real`) in the B fragments' layout
// (b0 (k = t4, n = g), b1 (k = t4 + 4, n = g)): lane 4c + t of its block of 8 partners (c its
// column) takes f[t] = {B1[t], B1[t + 4], B2[t], B2[t + 4]}.
template <int D>
__device__ __forceinline__ void partner_fragments(const float (&y)[3], bool real, float4 (&f)[4]) {
  float h[3] = {0.f, 0.f, 0.f}, l[3] = {0.f, 0.f, 0.f};
  float cb = kTensorFar;
  if (real) {
    double nb = 0;
#pragma unroll
    for (int d = 0; d < D; ++d) {
      nb += static_cast<double>(y[d]) * y[d];
      split(y[d], h[d], l[d]);
    }
    cb = static_cast<float>(nb);
  }
  float ch, cl;
  split(cb, ch, cl);
  f[0] = make_float4(h[0], h[1], l[0], ch);
  f[1] = make_float4(h[1], h[2], l[1], cl);
  f[2] = make_float4(h[2], 1.f, l[2], 0.f);
  f[3] = make_float4(h[0], 1.f, 0.f, 0.f);
}
// The 16 × 8 block's s' in the C fragment (c[q] at row g + (q >> 1)·8, column 2·t4 + (q & 1)).
__device__ __forceinline__ void gram_block(float (&c)[4], const std::uint32_t (&a1)[4], const std::uint32_t (&a2)[4],
                                           float4 b) {
  c[0] = c[1] = c[2] = c[3] = 0.f;
  mma_tf32(c, a1, b.x, b.y);
  mma_tf32(c, a2, b.z, b.w);
}
// A fragments (PTX m16n8k8 .tf32: a0 (g, t4), a1 (g + 8, t4), a2 (g, t4 + 4), a3 (g + 8, t4 + 4))
// of the rows of anchors `top` (row g) and `bottom` (row g + 8).
__device__ __forceinline__ void anchor_fragments(const float (&top1)[8], const float (&top2)[8], const float (&bot1)[8],
                                                 const float (&bot2)[8], int t4, std::uint32_t (&a1)[4],
                                                 std::uint32_t (&a2)[4]) {
  a1[0] = __float_as_uint(pick(top1, t4));
  a1[1] = __float_as_uint(pick(bot1, t4));
  a1[2] = __float_as_uint(pick(top1, t4 + 4));
  a1[3] = __float_as_uint(pick(bot1, t4 + 4));
  a2[0] = __float_as_uint(pick(top2, t4));
  a2[1] = __float_as_uint(pick(bot2, t4));
  a2[2] = __float_as_uint(pick(top2, t4 + 4));
  a2[3] = __float_as_uint(pick(bot2, t4 + 4));
}
// Point i of a set's float32 coordinates (zeros beyond D).
template <int D>
__device__ __forceinline__ void coordinates(const DeviceSet& set, std::uint32_t i, float (&x)[3]) {
  x[0] = x[1] = x[2] = 0.f;
  if (i < set.n)
#pragma unroll
    for (int d = 0; d < D; ++d) x[d] = set.x[d][i];
}
// The A fragments of MMA 1 for the warp's 64 anchors from w0 (four 16-row tiles), the anchors taken
// about `centre` (the histograms' item centre; zeros for the counts: x − 0 is x) with |a|² − t_hi.
template <int D>
__device__ __forceinline__ void warp_anchor_fragments(const DeviceSet& A, std::uint32_t w0, int g, int t4,
                                                      const float (&centre)[3], double t_hi, std::uint32_t (&a1)[4][4]) {
#pragma unroll
  for (int m = 0; m < 4; ++m) {
    float top1[8], top2[8], bot1[8], bot2[8], x[3];
    const std::uint32_t it = w0 + m * 16 + g, ib = it + 8;
    coordinates<D>(A, it, x);
#pragma unroll
    for (int d = 0; d < D; ++d) x[d] = __fsub_rn(x[d], centre[d]);
    anchor_rows<D>(x, it < A.n, t_hi, top1, top2);
    coordinates<D>(A, ib, x);
#pragma unroll
    for (int d = 0; d < D; ++d) x[d] = __fsub_rn(x[d], centre[d]);
    anchor_rows<D>(x, ib < A.n, t_hi, bot1, bot2);
    std::uint32_t unused[4];
    anchor_fragments(top1, top2, bot1, bot2, t4, a1[m], unused);
  }
}
// Partner jt + tid (a sentinel from j1 on), about `centre`, into the shared B fragments: column
// tid % 8 of block tid / 8.
template <int D>
__device__ __forceinline__ void stage_partner_fragments(const DeviceSet& B, std::uint32_t jt, std::uint32_t j1,
                                                        const float (&centre)[3], float4* s_frag) {
  const int tid = threadIdx.x;
  const std::uint32_t jl = jt + tid;
  float y[3];
  coordinates<D>(B, jl, y);
#pragma unroll
  for (int d = 0; d < D; ++d) y[d] = __fsub_rn(y[d], centre[d]);
  float4 f[4];
  partner_fragments<D>(y, jl < j1, f);
#pragma unroll
  for (int t = 0; t < 4; ++t) s_frag[(tid / 8) * 32 + (tid % 8) * 4 + t] = f[t];
}

// Half precision: the thirteen terms of s' in the sixteen columns of one mma.m16n8k16 (FP16
// operands, float32 accumulation), with coordinates scaled by a power of two σ (σM < 1):
//   A (anchor):  [−2x_h, −2y_h, −2z_h, −2x_h, −2y_h, −2z_h, −2x_l, −2y_l, −2z_l, ca_h, ca_l, 1,    1,    0, 0, 0]
//   B (partner): [ x_h,   y_h,   z_h,   x_l,   y_l,   z_l,   x_h,   y_h,   z_h,  1,    1,    cb_h, cb_l, 0, 0, 0]
// A lane holds columns {2t4, 2t4 + 1} and {2t4 + 8, 2t4 + 9} of its rows (A) or column (B), two
// FP16 a register (PTX: the lower half the lower column). A block of 8 partners is one 8-byte
// shared load a lane (TF32: 16 bytes) and one MMA per 16 anchors (TF32: two, dependent).
constexpr float kHalfFar = 16384.f;  // sentinels' ca or cb (2^14, exact in FP16; kHalfTermLimit)
__device__ __forceinline__ float half_round(float x) { return __half2float(__float2half_rn(x)); }
__device__ __forceinline__ void split_half(float x, float& hi, float& lo) {
  hi = half_round(x);
  lo = half_round(__fsub_rn(x, hi));
}
__device__ __forceinline__ std::uint32_t half_pair(float lo_column, float hi_column) {
  const __half2 h = __floats2half2_rn(lo_column, hi_column);  // .x: the lower 16 bits
  return *reinterpret_cast<const std::uint32_t*>(&h);
}
__device__ __forceinline__ void mma_f16(float (&d)[4], const std::uint32_t (&a)[4], std::uint32_t b0, std::uint32_t b1) {
  asm(
      "mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32 {%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, {%0,%1,%2,%3};"
      : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3])
      : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b0), "r"(b1));
}
// An anchor's row (x already scaled; a sentinel when not `real`), ca = |a|² − T in scaled units.
template <int D>
__device__ __forceinline__ void half_anchor_row(const float (&x)[3], bool real, double t_hi, float (&row)[16]) {
  float h[3] = {0.f, 0.f, 0.f}, l[3] = {0.f, 0.f, 0.f};
  float ca = kHalfFar;
  if (real) {
    double na = 0;
#pragma unroll
    for (int d = 0; d < D; ++d) {
      na += static_cast<double>(x[d]) * x[d];
      split_half(x[d], h[d], l[d]);
    }
    ca = static_cast<float>(na - t_hi);
  }
  float ch, cl;
  split_half(ca, ch, cl);
#pragma unroll
  for (int d = 0; d < 3; ++d) {
    row[d] = row[3 + d] = -2.f * h[d];
    row[6 + d] = -2.f * l[d];
  }
  row[9] = ch;
  row[10] = cl;
  row[11] = row[12] = 1.f;
  row[13] = row[14] = row[15] = 0.f;
}
template <int D>
__device__ __forceinline__ void half_partner_column(const float (&y)[3], bool real, float (&col)[16]) {
  float h[3] = {0.f, 0.f, 0.f}, l[3] = {0.f, 0.f, 0.f};
  float cb = kHalfFar;
  if (real) {
    double nb = 0;
#pragma unroll
    for (int d = 0; d < D; ++d) {
      nb += static_cast<double>(y[d]) * y[d];
      split_half(y[d], h[d], l[d]);
    }
    cb = static_cast<float>(nb);
  }
  float ch, cl;
  split_half(cb, ch, cl);
#pragma unroll
  for (int d = 0; d < 3; ++d) {
    col[d] = col[6 + d] = h[d];
    col[3 + d] = l[d];
  }
  col[9] = col[10] = 1.f;
  col[11] = ch;
  col[12] = cl;
  col[13] = col[14] = col[15] = 0.f;
}
__device__ __forceinline__ float pick16(const float (&v)[16], int k) {
  float r = v[0];
#pragma unroll
  for (int q = 1; q < 16; ++q) r = k == q ? v[q] : r;
  return r;
}
// A fragments of the rows of anchors `top` (row g) and `bottom` (row g + 8).
__device__ __forceinline__ void half_anchor_fragments(const float (&top)[16], const float (&bot)[16], int t4,
                                                      std::uint32_t (&a)[4]) {
  a[0] = half_pair(pick16(top, 2 * t4), pick16(top, 2 * t4 + 1));
  a[1] = half_pair(pick16(bot, 2 * t4), pick16(bot, 2 * t4 + 1));
  a[2] = half_pair(pick16(top, 2 * t4 + 8), pick16(top, 2 * t4 + 9));
  a[3] = half_pair(pick16(bot, 2 * t4 + 8), pick16(bot, 2 * t4 + 9));
}
// The warp's 64 anchors from w0 (four 16-row tiles), scaled by `scale`.
template <int D>
__device__ __forceinline__ void warp_half_anchor_fragments(const DeviceSet& A, std::uint32_t w0, int g, int t4, float scale,
                                                           double t_hi, std::uint32_t (&a)[4][4]) {
#pragma unroll
  for (int m = 0; m < 4; ++m) {
    float top[16], bot[16], x[3];
    const std::uint32_t it = w0 + m * 16 + g, ib = it + 8;
    coordinates<D>(A, it, x);
#pragma unroll
    for (int d = 0; d < D; ++d) x[d] = __fmul_rn(x[d], scale);
    half_anchor_row<D>(x, it < A.n, t_hi, top);
    coordinates<D>(A, ib, x);
#pragma unroll
    for (int d = 0; d < D; ++d) x[d] = __fmul_rn(x[d], scale);
    half_anchor_row<D>(x, ib < A.n, t_hi, bot);
    half_anchor_fragments(top, bot, t4, a[m]);
  }
}
// Partner jt + tid (a sentinel from j1 on), scaled, into the shared B fragments: lane 4c + t of
// block tid / 8 (c = tid % 8) takes {B[2t], B[2t + 1]}, {B[2t + 8], B[2t + 9]}.
template <int D>
__device__ __forceinline__ void stage_half_partner_fragments(const DeviceSet& B, std::uint32_t jt, std::uint32_t j1,
                                                             float scale, uint2* s_frag) {
  const int tid = threadIdx.x;
  const std::uint32_t jl = jt + tid;
  float y[3];
  coordinates<D>(B, jl, y);
#pragma unroll
  for (int d = 0; d < D; ++d) y[d] = __fmul_rn(y[d], scale);
  float col[16];
  half_partner_column<D>(y, jl < j1, col);
#pragma unroll
  for (int t = 0; t < 4; ++t)
    s_frag[(tid / 8) * 32 + (tid % 8) * 4 + t] =
        make_uint2(half_pair(col[2 * t], col[2 * t + 1]), half_pair(col[2 * t + 8], col[2 * t + 9]));
}
}  // namespace tensor_detail

// Lo: a range starting above zero (a second sign bit and band per pair).
// Half: one FP16 MMA a block (HalfGram) instead of two split-TF32 ones.
template <int D, bool Lo, bool Half, class Proxy, class Exact>
__global__ void __launch_bounds__(kThreads, 3)
    tensor_count_kernel(__grid_constant__ const PairKernelArgs<Proxy, Exact> args, const TensorCountShape shape) {
  static_assert(D >= 1 && D <= 3, "tensor-core counts take up to three coordinates");
  using namespace tensor_detail;
  __shared__ float4 s_frag[kThreads * 4];  // 32 blocks of 8 partners x 32 lanes
  __shared__ unsigned long long s_item;
  const int tid = threadIdx.x, lane = tid % 32, warp = tid / 32;
  const int g = lane / 4, t4 = lane % 4;
  unsigned long long n_settled = 0, total = 0;
  long long fix = 0;  // float64 verdicts minus sign-bit ones, and the diagonal blocks' counts

  const auto settle = [&](std::uint32_t i, std::uint32_t j) {
    ++n_settled;
    return static_cast<long long>(find_bin_unpadded(args.edges64, args.nbins, args.steps, float64_key<D>(args, i, j)) >= 0);
  };

  for (TileItem item; claim_tile_item(args, s_item, kTensorAnchors, item);) {
    const std::uint32_t i0 = item.i0, j0 = item.j0, j1 = item.j1;
    if (args.is_auto && j1 <= i0 + 1) continue;
    const std::uint32_t w0 = i0 + warp * 64;  // this warp's anchors: w0 .. w0 + 63

    constexpr float kOrigin[3] = {0.f, 0.f, 0.f};
    std::uint32_t a1[4][4];  // TF32: MMA 2's come from these (second_fragments)
    if constexpr (Half)
      warp_half_anchor_fragments<D>(args.A, w0, g, t4, shape.scale, shape.t_hi, a1);
    else
      warp_anchor_fragments<D>(args.A, w0, g, t4, kOrigin, shape.t_hi, a1);
    // Sign bits this item (< 2^32: 4 a lane per 8 partners), a counter per 16-row tile: four
    // independent chains of LEA.HI instead of one sixteen deep (the verdicts' dependent chains,
    // not the issue rate, bounded the kernel: ~2 instructions a clock of 4).
    unsigned c_hi[4] = {0u, 0u, 0u, 0u}, c_lo[4] = {0u, 0u, 0u, 0u};

    // One block of 8 partners from pb off the diagonal, its 4 × 4 s' in c: the sign bits, and the
    // lane's pairs within a band (rare) settled in float64.
    const auto judge = [&](const float (&c)[4][4], std::uint32_t pb) {
      float worst4[4], worst_lo4[4];  // (the same: four short chains, then two steps)
#pragma unroll
      for (int m = 0; m < 4; ++m) {
        worst4[m] = worst_lo4[m] = HUGE_VALF;
#pragma unroll
        for (int q = 0; q < 4; ++q) {
          const float s = c[m][q];
          c_hi[m] += __float_as_uint(s) >> 31;
          worst4[m] = fminf(worst4[m], fabsf(s));
          if constexpr (Lo) {
            const float sl = __fadd_rn(s, shape.t_diff);
            c_lo[m] += __float_as_uint(sl) >> 31;
            worst_lo4[m] = fminf(worst_lo4[m], fabsf(sl));
          }
        }
      }
      const float worst = fminf(fminf(worst4[0], worst4[1]), fminf(worst4[2], worst4[3]));
      const float worst_lo = fminf(fminf(worst_lo4[0], worst_lo4[1]), fminf(worst_lo4[2], worst_lo4[3]));
      if (worst <= shape.band_hi || (Lo && worst_lo <= shape.band_lo)) {
        // Rare: this lane's pairs within the band go to float64.
#pragma unroll
        for (int m = 0; m < 4; ++m)
#pragma unroll
          for (int q = 0; q < 4; ++q) {
            const float s = c[m][q];
            const float sl = __fadd_rn(s, shape.t_diff);
            const std::uint32_t i = w0 + m * 16 + g + (q >> 1) * 8, j = pb + 2 * t4 + (q & 1);
            if ((fabsf(s) <= shape.band_hi || (Lo && fabsf(sl) <= shape.band_lo)) && i < args.A.n && j < j1) {
              const long long fast = static_cast<long long>(s < 0.f) - static_cast<long long>(Lo && sl < 0.f);
              fix += settle(i, j) - fast;
            }
          }
      }
    };
    // The 4 × 4 s' of a block of 8 partners (its fragments at s_frag[nt·32 + lane]).
    const auto gram4 = [&](int nt, float (&c)[4][4]) {
      if constexpr (Half) {
        const uint2 b = reinterpret_cast<const uint2*>(s_frag)[nt * 32 + lane];
#pragma unroll
        for (int m = 0; m < 4; ++m) {
          c[m][0] = c[m][1] = c[m][2] = c[m][3] = 0.f;
          mma_f16(c[m], a1[m], b.x, b.y);
        }
      } else {
        const float4 b = s_frag[nt * 32 + lane];
#pragma unroll
        for (int m = 0; m < 4; ++m) {
          std::uint32_t a2[4];
          second_fragments(a1[m], t4, a2);
          gram_block(c[m], a1[m], a2, b);
        }
      }
    };

    for (std::uint32_t jt = first_wanted_subtile(args.is_auto, i0, j0); jt < j1; jt += kThreads) {
      __syncthreads();
      if constexpr (Half)
        stage_half_partner_fragments<D>(args.B, jt, j1, shape.scale, reinterpret_cast<uint2*>(s_frag));
      else
        stage_partner_fragments<D>(args.B, jt, j1, kOrigin, s_frag);
      __syncthreads();

      if (!(args.is_auto && jt <= w0 + 63)) {
        // Every block of this sub-tile above the warp's anchors (almost all of them): no tests.
#pragma unroll 2
        for (int nt = 0; nt < kThreads / 8; ++nt) {
          float c[4][4];
          gram4(nt, c);
          judge(c, jt + nt * 8);
        }
        continue;
      }
      for (int nt = 0; nt < kThreads / 8; ++nt) {
        const std::uint32_t pb = jt + nt * 8;  // partners pb .. pb + 7
        // Warp-uniform: every partner at or below every anchor of the warp; some of them.
        if (args.is_auto && pb + 8 <= w0 + 1) continue;
        float c[4][4];
        gram4(nt, c);
        if (pb > w0 + 63) {
          judge(c, pb);
        } else {
          // On the diagonal: j > i, real points only, each verdict counted here.
#pragma unroll
          for (int m = 0; m < 4; ++m)
#pragma unroll
            for (int q = 0; q < 4; ++q) {
              const std::uint32_t i = w0 + m * 16 + g + (q >> 1) * 8, j = pb + 2 * t4 + (q & 1);
              if (i >= args.A.n || j >= j1 || j <= i) continue;
              const float s = c[m][q];
              const float sl = __fadd_rn(s, shape.t_diff);
              if (fabsf(s) <= shape.band_hi || (Lo && fabsf(sl) <= shape.band_lo))
                fix += settle(i, j);
              else
                fix += static_cast<long long>(s < 0.f) - static_cast<long long>(Lo && sl < 0.f);
            }
        }
      }
    }
    total += (c_hi[0] + c_hi[1]) + (c_hi[2] + c_hi[3]) - (c_lo[0] + c_lo[1]) - (c_lo[2] + c_lo[3]);
  }

  total += static_cast<unsigned long long>(fix);  // modular: the grand total is right
  for (int off = 16; off > 0; off >>= 1) {
    n_settled += __shfl_down_sync(0xffffffffu, n_settled, off);
    total += __shfl_down_sync(0xffffffffu, total, off);
  }
  if (lane == 0) {
    if (n_settled) atomicAdd(args.settled, n_settled);
    if (total) atomicAdd(&args.counts[0], total);
  }
}

// The tensor-core counts (launch: agent_launch.cuh's AgentLaunch): FP16 or split TF32, a lower edge
// above zero or not.
template <int D, class P, class F, class Launch>
void launch_tensor_count(const AgentChoice& c, Launch& launch) {
  const bool lo = c.tensor.has_lo;
  const auto kernel = c.tensor_half ? (lo ? tensor_count_kernel<D, true, true, P, F> : tensor_count_kernel<D, false, true, P, F>)
                                    : (lo ? tensor_count_kernel<D, true, false, P, F> : tensor_count_kernel<D, false, false, P, F>);
  launch(kernel, kThreads, 0, "tensor_count_kernel", c.tensor);
}

}  // namespace twobody::cuda
