#pragma once
// The float64 keys of a 64 x 64 tile of vector pairs (docs/exactness.md), shared by the join and
// k-NN kernels so that both compute every key with the same arithmetic as the CPU: a block of 256
// threads, each holding a 4 x 4 register tile of sums strided by 16 (the shared-memory reads of a
// warp then fall in different banks); the rows stream through shared memory 16 coordinates at a
// time, in order, so every sum is over k in stored order, without FMA (the library is compiled
// with --fmad=false). Coordinates past the last are zeros, which add +0 and change no sum.
#include <cstddef>

namespace twobody::cuda::vector_keys {

constexpr int kTile = 64;            // anchors (and partners) of a tile
constexpr int kChunk = 16;           // coordinates staged at a time
constexpr int kSide = 16;            // threads along each side: 16 x 16 = 256
constexpr int kThreads = kSide * kSide;
constexpr int kPer = kTile / kSide;  // sums per thread along each side

// Staging: coordinate kk of tile row r at [kk][r] (one column of padding against bank conflicts).
using Staged = double (*)[kTile + 1];

__device__ inline void stage(Staged to, const double* rows, std::size_t n, int dim, std::size_t row0, int k0) {
  for (int e = threadIdx.x; e < kTile * kChunk; e += kThreads) {
    const int r = e / kChunk, kk = e % kChunk;
    const std::size_t row = row0 + r;
    const int k = k0 + kk;
    to[kk][r] = row < n && k < dim ? rows[row * static_cast<std::size_t>(dim) + k] : 0.0;
  }
}

// The sums of anchors a0 + ty + 16 r (rows of `a`) against partners b0 + tx + 16 c (rows of `b`),
// tx = threadIdx.x % 16, ty = threadIdx.x / 16: sum_k a_k b_k (cosine; the key is 1 - the sum)
// or sum_k (a_k - b_k)^2. Every thread of the block calls it; `as` and `bs` are kChunk rows of
// shared memory each, free again when it returns (it ends on a barrier).
__device__ inline void key_sums(double (&acc)[kPer][kPer], Staged as, Staged bs, const double* a, std::size_t na,
                                const double* b, std::size_t nb, int dim, std::size_t a0, std::size_t b0,
                                bool cosine) {
  const int tx = threadIdx.x % kSide, ty = threadIdx.x / kSide;
#pragma unroll
  for (int r = 0; r < kPer; ++r)
#pragma unroll
    for (int c = 0; c < kPer; ++c) acc[r][c] = 0.0;
  for (int k0 = 0; k0 < dim; k0 += kChunk) {
    stage(as, a, na, dim, a0, k0);
    stage(bs, b, nb, dim, b0, k0);
    __syncthreads();
#pragma unroll
    for (int kk = 0; kk < kChunk; ++kk) {
      double av[kPer], bv[kPer];
#pragma unroll
      for (int r = 0; r < kPer; ++r) av[r] = as[kk][ty + kSide * r];
#pragma unroll
      for (int c = 0; c < kPer; ++c) bv[c] = bs[kk][tx + kSide * c];
#pragma unroll
      for (int r = 0; r < kPer; ++r)
#pragma unroll
        for (int c = 0; c < kPer; ++c) {
          if (cosine) {
            acc[r][c] += av[r] * bv[c];
          } else {
            const double d = av[r] - bv[c];
            acc[r][c] += d * d;
          }
        }
    }
    __syncthreads();
  }
}

}  // namespace twobody::cuda::vector_keys
