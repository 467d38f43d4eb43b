// The tensor-core counts' error bound (counting_bounds.hpp, tensor_gram_error) rests on an
// assumption about the tensor cores' float32 accumulation. Measured here with the kernel's own
// device functions (splits, fragments, the two MMAs) against the exact s' of the float32
// coordinates, on random data of full-mantissa coordinates at several scales and cutoffs: the
// worst error must stay within half the bound. Label: gpu.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>
#include <cstring>
#include <random>
#include <vector>

#include "twobody/detail/engine/backend.hpp"
#include "twobody/detail/exact/counting_bounds.hpp"
#include "twobody/detail/cuda/tensor_count_tiles.cuh"

namespace {

using namespace twobody::cuda;

// One warp a block: anchors 16·b .. 16·b + 15 against partners 8·b .. 8·b + 7 of the arrays.
__global__ void tensor_error_kernel(const float* ax, const float* ay, const float* az, const float* bx, const float* by,
                                    const float* bz, double t, unsigned* worst_bits) {
  using namespace tensor_detail;
  const int lane = threadIdx.x, g = lane / 4, t4 = lane % 4, blk = blockIdx.x;
  const auto anchor = [&](int r, float (&x)[3]) {
    const int i = blk * 16 + r;
    x[0] = ax[i];
    x[1] = ay[i];
    x[2] = az[i];
  };
  float top1[8], top2[8], bot1[8], bot2[8], x[3];
  anchor(g, x);
  anchor_rows<3>(x, true, t, top1, top2);
  anchor(g + 8, x);
  anchor_rows<3>(x, true, t, bot1, bot2);
  std::uint32_t a1[4], a2[4], rows2[4];
  anchor_fragments(top1, top2, bot1, bot2, t4, a1, rows2);
  second_fragments(a1, t4, a2);  // as the kernel forms them; equal to MMA 2's rows
  for (int k = 0; k < 4; ++k)
    if (a2[k] != rows2[k]) atomicMax(worst_bits, __float_as_uint(HUGE_VALF));
  // The lane's B fragment: partner column g, entry t4.
  const int j = blk * 8 + g;
  float y[3] = {bx[j], by[j], bz[j]};
  float4 f[4];
  partner_fragments<3>(y, true, f);
  float c[4];
  gram_block(c, a1, a2, f[t4]);
  float worst = 0.f;
  for (int q = 0; q < 4; ++q) {
    const int i = blk * 16 + g + (q >> 1) * 8, jj = blk * 8 + 2 * t4 + (q & 1);
    const double a[3] = {ax[i], ay[i], az[i]}, b[3] = {bx[jj], by[jj], bz[jj]};
    double na = 0, nb = 0, ab = 0;
    for (int d = 0; d < 3; ++d) {
      na += a[d] * a[d];
      nb += b[d] * b[d];
      ab += a[d] * b[d];
    }
    const double exact = (na - t) + nb - 2 * ab;
    worst = fmaxf(worst, static_cast<float>(fabs(c[q] - exact)));
  }
  atomicMax(worst_bits, __float_as_uint(worst));
}

// The half-precision form (HalfGram): one m16n8k16 on coordinates scaled by `scale`; the worst
// error in original units (÷ scale²).
__global__ void tensor_half_error_kernel(const float* ax, const float* ay, const float* az, const float* bx,
                                         const float* by, const float* bz, double t, float scale, unsigned* worst_bits) {
  using namespace tensor_detail;
  const int lane = threadIdx.x, g = lane / 4, t4 = lane % 4, blk = blockIdx.x;
  const auto row = [&](int r, float (&v)[16]) {
    const int i = blk * 16 + r;
    const float x[3] = {ax[i] * scale, ay[i] * scale, az[i] * scale};
    half_anchor_row<3>(x, true, t * scale * scale, v);
  };
  float top[16], bot[16];
  row(g, top);
  row(g + 8, bot);
  std::uint32_t a[4];
  half_anchor_fragments(top, bot, t4, a);
  const int j = blk * 8 + g;
  const float y[3] = {bx[j] * scale, by[j] * scale, bz[j] * scale};
  float col[16];
  half_partner_column<3>(y, true, col);
  float c[4] = {0.f, 0.f, 0.f, 0.f};
  mma_f16(c, a, half_pair(col[2 * t4], col[2 * t4 + 1]), half_pair(col[2 * t4 + 8], col[2 * t4 + 9]));
  float worst = 0.f;
  for (int q = 0; q < 4; ++q) {
    const int i = blk * 16 + g + (q >> 1) * 8, jj = blk * 8 + 2 * t4 + (q & 1);
    const double a3[3] = {ax[i], ay[i], az[i]}, b3[3] = {bx[jj], by[jj], bz[jj]};
    double na = 0, nb = 0, ab = 0;
    for (int d = 0; d < 3; ++d) {
      na += a3[d] * a3[d];
      nb += b3[d] * b3[d];
      ab += a3[d] * b3[d];
    }
    const double exact = (na - t) + nb - 2 * ab;
    worst = fmaxf(worst, static_cast<float>(fabs(c[q] / (double(scale) * scale) - exact)));
  }
  atomicMax(worst_bits, __float_as_uint(worst));
}

// The worst |error| of a Gram-form kernel over 2^14 blocks of 16 anchors × 8 partners, uniform
// coordinates in [−M, M): `launch(blocks, ax, ay, az, bx, by, bz, worst_bits)` runs it.
template <class Launch>
float worst_gram_error(std::mt19937_64& rng, double M, const Launch& launch) {
  const int blocks = 1 << 14;
  std::uniform_real_distribution<float> u(static_cast<float>(-M), static_cast<float>(M));
  std::vector<float> h(6 * std::size_t(blocks) * 16);
  for (auto& v : h) v = u(rng);
  float* d = nullptr;
  unsigned* w = nullptr;
  EXPECT_EQ(cudaMalloc(&d, h.size() * sizeof(float)), cudaSuccess);
  EXPECT_EQ(cudaMalloc(&w, sizeof(unsigned)), cudaSuccess);
  EXPECT_EQ(cudaMemcpy(d, h.data(), h.size() * sizeof(float), cudaMemcpyHostToDevice), cudaSuccess);
  EXPECT_EQ(cudaMemset(w, 0, sizeof(unsigned)), cudaSuccess);
  const std::size_t n = std::size_t(blocks) * 16;
  launch(blocks, d, d + n, d + 2 * n, d + 3 * n, d + 4 * n, d + 5 * n, w);
  EXPECT_EQ(cudaDeviceSynchronize(), cudaSuccess);
  unsigned bits = 0;
  EXPECT_EQ(cudaMemcpy(&bits, w, sizeof bits, cudaMemcpyDeviceToHost), cudaSuccess);
  cudaFree(d);
  cudaFree(w);
  float worst;
  std::memcpy(&worst, &bits, sizeof worst);
  return worst;
}

// The tensor-core part of a bound (the float32 coordinates' rounding does not arise here), and the
// check that the kernel's measured error lies within half of it.
void expect_within_bound(const char* form, double M, double t, float worst,
                         double (*gram_error)(const twobody::DistanceErrorModel&, double)) {
  twobody::DistanceErrorModel m;
  m.dim = 3;
  m.M = M;
  const double bound = gram_error(m, t) - 1.01 * twobody::coordinate_error(m);
  std::printf("%s Gram form, M %g, T %g: worst |error| %.3g, bound %.3g (ratio %.3f)\n", form, M, t, worst, bound,
              worst / bound);
  EXPECT_GT(worst, 0.f);
  EXPECT_LE(worst, 0.5 * bound);
}

}  // namespace

// The half-precision form at scales where many FP16 lo parts are subnormal (M = 10^-3 scaled by
// 2^10, uniform coordinates: an eighth below 2^-3 M), at the benchmark's, and at cutoffs up to ten
// times the extent (T = 100 M²).
TEST(CudaTensorCounts, HalfAccumulationWithinTheAssumedBound) {
  if (!twobody::make_cuda_backend()) GTEST_SKIP() << "no CUDA device";
  std::mt19937_64 rng(std::random_device{}());
  for (double M : {0.5, 1e-3, 1e3})
    for (double r_over_m : {0.2, 0.05, 1.5, 10.0}) {
      const double t = (r_over_m * M) * (r_over_m * M);
      const float scale = static_cast<float>(twobody::tensor_half_scale(M));
      const float worst = worst_gram_error(rng, M, [&](int blocks, const float* ax, const float* ay, const float* az,
                                                       const float* bx, const float* by, const float* bz, unsigned* w) {
        tensor_half_error_kernel<<<blocks, 32>>>(ax, ay, az, bx, by, bz, t, scale, w);
      });
      expect_within_bound("half tensor", M, t, worst, twobody::tensor_half_gram_error);
    }
}

TEST(CudaTensorCounts, AccumulationWithinTheAssumedBound) {
  if (!twobody::make_cuda_backend()) GTEST_SKIP() << "no CUDA device";
  std::mt19937_64 rng(std::random_device{}());
  for (double M : {0.5, 1e3})
    for (double r_over_m : {0.2, 0.05, 1.5, 10.0}) {
      const double t = (r_over_m * M) * (r_over_m * M);
      const float worst = worst_gram_error(rng, M, [&](int blocks, const float* ax, const float* ay, const float* az,
                                                       const float* bx, const float* by, const float* bz, unsigned* w) {
        tensor_error_kernel<<<blocks, 32>>>(ax, ay, az, bx, by, bz, t, w);
      });
      expect_within_bound("tensor", M, t, worst, twobody::tensor_gram_error);
    }
}
