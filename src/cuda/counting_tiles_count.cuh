#pragma once
// The counting tiles' count (reduce::Count over all pairs of a Euclidean range, counting_tiles.cuh):
// the sign bits of s' = |b|² − 2a·b + (|a|² − T) in float32, the pairs within the band settled in
// float64; the kernel runs this body for its Reduce instantiations.
#include <cstdint>

#include "twobody/detail/cuda/counting_tiles_common.cuh"

namespace twobody::cuda {

// The count (Reduce) path, kept as one body: split into the helpers the histograms use, its
// anchors in a struct and its groups in a function, ptxas scheduled the hot loop another way
// (same instructions, other register order and stalls) and the forced CUDA-core count ran 5.8%
// slower on an H200 (bench/RESULTS.md, 2026-11-26). Its SASS is the same as before the split.
template <int D, bool Lo, class Proxy, class Exact>
__device__ __forceinline__ void count_tiles(const PairKernelArgs<Proxy, Exact>& args, const CountingTilesShape& shape) {
  using namespace counting_detail;
  extern __shared__ __align__(16) unsigned char smem[];
  float4* s_b = reinterpret_cast<float4*>(smem);
  __shared__ unsigned long long s_item;
  const int tid = threadIdx.x;
  unsigned long long n_settled = 0, total = 0;
  long long fix = 0;  // float64 verdicts minus sign-bit ones (revisits), and diagonal tiles

  // The float64 rule for one pair: bin (>= 0) or -1.
  auto settle = [&](std::uint32_t i, std::uint32_t j) {
    ++n_settled;
    return find_bin_unpadded(args.edges64, args.nbins, args.steps, float64_key<D>(args, i, j));
  };
  // One pair's verdict with its float64 settlement, for diagonal tiles.
  auto exact_pair = [&](const float (&a)[3], float ca, float4 b, std::uint32_t i, std::uint32_t j) {
    const float s = gram<D>(a, ca, b);
    const float sl = __fadd_rn(s, shape.t_diff);
    const bool unsure = fabsf(s) <= shape.band_hi || (Lo && fabsf(sl) <= shape.band_lo);
    fix += unsure ? static_cast<int>(settle(i, j) >= 0) : static_cast<int>(s < 0.f) - static_cast<int>(Lo && sl < 0.f);
  };

  for (TileItem item; claim_tile_item(args, s_item, kAnchors, item);) {
    const std::uint32_t i0 = item.i0, j0 = item.j0, j1 = item.j1;
    if (args.is_auto && j1 <= i0 + 1) continue;

    // Anchors: −2a and |a|² − T (a sentinel beyond the set).
    float a[kPerThread][3];
    float ca[kPerThread];
    std::uint32_t ia[kPerThread];
#pragma unroll
    for (int r = 0; r < kPerThread; ++r) {
      ia[r] = i0 + r * kThreads + tid;
      const bool ok = ia[r] < args.A.n;
      double na = 0;
#pragma unroll
      for (int d = 0; d < 3; ++d) {
        const float x = d >= D ? 0.f : ok ? args.A.x[d][ia[r]] : 0.f;
        na += static_cast<double>(x) * x;
        a[r][d] = -2.f * x;
      }
      ca[r] = ok ? static_cast<float>(na - shape.t_hi) : kFarNorm;
    }
    unsigned c_hi[kPerThread], c_lo[kPerThread];  // sign bits this item (< 2^32: kChunk partners)
#pragma unroll
    for (int r = 0; r < kPerThread; ++r) c_hi[r] = c_lo[r] = 0;

    for (std::uint32_t jt = first_wanted_subtile(args.is_auto, i0, j0); jt < j1; jt += kThreads) {
      __syncthreads();
      {
        const std::uint32_t jl = jt + tid;
        float4 p = make_float4(0.f, 0.f, 0.f, kFarNorm);
        if (jl < j1) {
          float b[3] = {0.f, 0.f, 0.f};
          double nb = 0;
#pragma unroll
          for (int d = 0; d < D; ++d) {
            b[d] = args.B.x[d][jl];
            nb += static_cast<double>(b[d]) * b[d];
          }
          p = make_float4(b[0], b[1], b[2], static_cast<float>(nb));
        }
        s_b[tid] = p;
      }
      __syncthreads();

      if (!args.is_auto || jt >= i0 + kAnchors) {
        // Every pair of the sub-tile is wanted (sentinels stand for missing points).
        for (int g = 0; g < kThreads; g += 32) {
          float worst[2] = {HUGE_VALF, HUGE_VALF};  // the smallest |s'|
          float worst_lo = HUGE_VALF;
#pragma unroll 4
          for (int t = 0; t < 32; ++t) {
            const float4 b = s_b[g + t];
#pragma unroll
            for (int r = 0; r < kPerThread; ++r) {
              const float s = gram<D>(a[r], ca[r], b);
              c_hi[r] += __float_as_uint(s) >> 31;
              worst[r & 1] = fminf(worst[r & 1], fabsf(s));
              if constexpr (Lo) {
                const float sl = __fadd_rn(s, shape.t_diff);
                c_lo[r] += __float_as_uint(sl) >> 31;
                worst_lo = fminf(worst_lo, fabsf(sl));
              }
            }
          }
          // Rare: the group's pairs within the band go to their float64 bin (anchors unrolled: an
          // indexed register array would live in local memory).
          if (fminf(worst[0], worst[1]) <= shape.band_hi || worst_lo <= shape.band_lo) {
#pragma unroll 1
            for (int t = 0; t < 32; ++t) {
              const float4 b = s_b[g + t];
#pragma unroll
              for (int r = 0; r < kPerThread; ++r) {
                const float s = gram<D>(a[r], ca[r], b);
                const float sl = __fadd_rn(s, shape.t_diff);
                if ((fabsf(s) <= shape.band_hi || (Lo && fabsf(sl) <= shape.band_lo)) && ia[r] < args.A.n &&
                    jt + g + t < j1) {
                  const int fast = static_cast<int>(s < 0.f) - static_cast<int>(Lo && sl < 0.f);
                  fix += static_cast<int>(settle(ia[r], jt + g + t) >= 0) - fast;
                }
              }
            }
          }
        }
      } else {
        // On the diagonal: pair by pair, j > i, real points only.
        const int nj = static_cast<int>(min(static_cast<std::uint32_t>(kThreads), j1 - jt));
#pragma unroll 1
        for (int jj = 0; jj < nj; ++jj) {
          const float4 b = s_b[jj];
          const std::uint32_t j = jt + jj;
#pragma unroll
          for (int r = 0; r < kPerThread; ++r)
            if (ia[r] < args.A.n && j > ia[r]) exact_pair(a[r], ca[r], b, ia[r], j);
        }
      }
    }
#pragma unroll
    for (int r = 0; r < kPerThread; ++r) total += c_hi[r] - c_lo[r];
  }

  total += static_cast<unsigned long long>(fix);  // modular: the grand total is right
  for (int off = 16; off > 0; off >>= 1) {
    n_settled += __shfl_down_sync(0xffffffffu, n_settled, off);
    total += __shfl_down_sync(0xffffffffu, total, off);
  }
  if (tid % 32 == 0) {
    if (n_settled) atomicAdd(args.settled, n_settled);
    if (total) atomicAdd(&args.counts[0], total);
  }
}

}  // namespace twobody::cuda
