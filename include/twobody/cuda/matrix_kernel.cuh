#pragma once
// Dense matrix output: every (i, j) of a row chunk, evaluated in float64 with the pair function
// itself, so the matrix equals the CPU backend's. Consecutive threads write consecutive columns.
#include <cstdint>

#include "twobody/cuda/pair_kernel.cuh"

namespace twobody::cuda {

template <int D, class F>
__global__ void matrix_kernel(const DeviceSet A, const DeviceSet B, const F f, std::uint32_t row0,
                              std::uint32_t nrows, double* out) {
  const std::uint32_t j = blockIdx.x * blockDim.x + threadIdx.x;
  const std::uint32_t r = blockIdx.y * blockDim.y + threadIdx.y;
  if (j >= B.n || r >= nrows) return;
  const std::uint32_t i = row0 + r;
  double a[D], b[D];
#pragma unroll
  for (int d = 0; d < D; ++d) {
    a[d] = A.x64[d][i];
    b[d] = B.x64[d][j];
  }
  out[static_cast<std::size_t>(r) * B.n + j] = f.natural_of(f.key(a, b));
}

}  // namespace twobody::cuda
