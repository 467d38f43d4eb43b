// The counting tiles take d = sqrt.approx.f32(d²) and assume its relative error is at most
// kSqrtApproxError (counting_bounds.hpp). Measured here over every float in [2^-48, 2^48), with a
// factor of 2 to spare. Label: gpu.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstring>

#include "twobody/detail/engine/backend.hpp"
#include "twobody/detail/exact/counting_bounds.hpp"

namespace {

__global__ void sqrt_approx_error(std::uint32_t first, std::uint64_t count, unsigned* worst_bits) {
  float worst = 0.f;
  for (std::uint64_t k = blockIdx.x * std::uint64_t(blockDim.x) + threadIdx.x; k < count;
       k += std::uint64_t(gridDim.x) * blockDim.x) {
    const float s = __uint_as_float(first + static_cast<std::uint32_t>(k));
    float d;
    asm("sqrt.approx.ftz.f32 %0, %1;" : "=f"(d) : "f"(s));
    const double exact = sqrt(static_cast<double>(s));
    worst = fmaxf(worst, static_cast<float>(fabs(d - exact) / exact));
  }
  atomicMax(worst_bits, __float_as_uint(worst));
}

}  // namespace

TEST(CudaSqrtApprox, RelativeErrorWithinTheAssumedBound) {
  if (!twobody::make_cuda_backend()) GTEST_SKIP() << "no CUDA device";
  const std::uint32_t first = 0x27800000u;  // 2^-48
  const std::uint32_t last = 0x57800000u;   // 2^48
  unsigned* d_worst = nullptr;
  ASSERT_EQ(cudaMalloc(&d_worst, sizeof(unsigned)), cudaSuccess);
  ASSERT_EQ(cudaMemset(d_worst, 0, sizeof(unsigned)), cudaSuccess);
  sqrt_approx_error<<<1024, 256>>>(first, last - first, d_worst);
  ASSERT_EQ(cudaDeviceSynchronize(), cudaSuccess);
  unsigned bits = 0;
  ASSERT_EQ(cudaMemcpy(&bits, d_worst, sizeof bits, cudaMemcpyDeviceToHost), cudaSuccess);
  cudaFree(d_worst);
  float worst;
  std::memcpy(&worst, &bits, sizeof worst);
  RecordProperty("sqrt_approx_worst_relative_error", std::to_string(worst));
  std::printf("sqrt.approx.f32: worst relative error %.3g (2^%.2f); assumed %.3g\n", worst, std::log2(worst),
              twobody::kSqrtApproxError);
  EXPECT_GT(worst, 0.f);
  EXPECT_LE(2.0 * worst, twobody::kSqrtApproxError);
}
