#pragma once
// Dense matrix output in seed 001's decomposition: the n1 x n2 matrix in tiles of kMatrixRows x
// kMatrixSubtiles rows by 32 columns, one tile a block of 32 x kMatrixRows threads. A thread owns
// one column: its vector is loaded once into registers and reused over the tile's kMatrixSubtiles
// subtiles. The tile's rows are staged in shared memory; a warp reads one row there, a broadcast,
// and writes 32 consecutive doubles of the output. Every entry is the pair function's float64
// value, so the matrix equals the CPU backend's (the diagonal of an auto matrix too: f(a, a), which
// a user's kernel function need not make 0). With at most kMaxDim = 8 coordinates a vector
// fits in registers, and seed 001's dimension slices are not needed.
#include <cstdint>

#include "twobody/detail/cuda/cuda_check.hpp"
#include "twobody/detail/cuda/pair_kernel.cuh"

namespace twobody::cuda {

inline constexpr int kMatrixRows = 8;       // r: rows of a subtile (warps of a block)
inline constexpr int kMatrixSubtiles = 8;   // s: subtiles of a tile (column reuse)
inline constexpr int kMatrixTileRows = kMatrixRows * kMatrixSubtiles;

// Rows [row0, row0 + nrows) of the matrix into out (row-major, B.n columns).
template <int D, class F>
__global__ void __launch_bounds__(32 * kMatrixRows) matrix_tile_kernel(const DeviceSet A, const DeviceSet B, const F f,
                                                                       std::uint32_t row0, std::uint32_t nrows, double* out) {
  __shared__ double rows[kMatrixTileRows][D];
  const std::uint32_t first = blockIdx.y * kMatrixTileRows;
  // Consecutive threads read consecutive rows of one coordinate (coalesced).
  for (int t = threadIdx.y * 32 + threadIdx.x; t < kMatrixTileRows * D; t += 32 * kMatrixRows) {
    const int d = t / kMatrixTileRows, k = t % kMatrixTileRows;
    const std::uint32_t r = first + static_cast<std::uint32_t>(k);
    rows[k][d] = r < nrows ? A.x64[d][row0 + r] : 0.0;
  }
  __syncthreads();
  const std::uint32_t j = blockIdx.x * 32 + threadIdx.x;
  if (j >= B.n) return;
  double b[D];
#pragma unroll
  for (int d = 0; d < D; ++d) b[d] = B.x64[d][j];
#pragma unroll
  for (int s = 0; s < kMatrixSubtiles; ++s) {
    const int k = s * kMatrixRows + static_cast<int>(threadIdx.y);
    const std::uint32_t r = first + static_cast<std::uint32_t>(k);
    if (r >= nrows) break;
    out[static_cast<std::size_t>(r) * B.n + j] = f.natural_of(f.key(rows[k], b));
  }
}

// One thread an entry, both vectors from global memory: the bench's baseline for the tiles.
template <int D, class F>
__global__ void matrix_naive_kernel(const DeviceSet A, const DeviceSet B, const F f, std::uint32_t row0,
                                    std::uint32_t nrows, double* out) {
  const std::uint32_t j = blockIdx.x * blockDim.x + threadIdx.x;
  const std::uint32_t r = blockIdx.y * blockDim.y + threadIdx.y;
  if (j >= B.n || r >= nrows) return;
  double a[D], b[D];
#pragma unroll
  for (int d = 0; d < D; ++d) {
    a[d] = A.x64[d][row0 + r];
    b[d] = B.x64[d][j];
  }
  out[static_cast<std::size_t>(r) * B.n + j] = f.natural_of(f.key(a, b));
}

// Launches matrix_tile_kernel over rows [row0, row0 + nrows) on `stream` (nrows at most
// kMatrixMaxLaunchRows: the grid's y extent).
inline constexpr std::uint32_t kMatrixMaxLaunchRows = 65535u * kMatrixTileRows;
template <int D, class F>
void launch_matrix_tiles(const DeviceSet& A, const DeviceSet& B, const F& f, std::uint32_t row0, std::uint32_t nrows,
                         double* out, cudaStream_t stream) {
  if (nrows == 0 || B.n == 0) return;
  const dim3 block(32, kMatrixRows);
  const dim3 grid((B.n + 31) / 32, (nrows + kMatrixTileRows - 1) / kMatrixTileRows);
  matrix_tile_kernel<D><<<grid, block, 0, stream>>>(A, B, f, row0, nrows, out);
  TWOBODY_CUDA_CHECK_LAUNCH("matrix_tile_kernel");
}

}  // namespace twobody::cuda
