// Dense matrix rows of the benchmark (seed 001's tiles, issue 4): the engine's tile kernel and a
// one-thread-an-entry kernel writing an n x n Euclidean distance matrix into device memory, beside
// the card's write ceiling (cudaMemset of as many bytes) and the bus's device-to-host rate
// (cudaMemcpy into pinned memory), each the best of three, timed by CUDA events.
#include <cuda_runtime.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <random>
#include <vector>

#include "matrix_rows.hpp"
#include "twobody/detail/cuda/matrix_kernel.cuh"

namespace {

void check(cudaError_t e, const char* what) {
  if (e != cudaSuccess) {
    std::fprintf(stderr, "CUDA error in %s: %s\n", what, cudaGetErrorString(e));
    std::exit(1);
  }
}

template <class Launch>
double best_of_three(Launch&& launch) {
  cudaEvent_t a, b;
  check(cudaEventCreate(&a), "cudaEventCreate");
  check(cudaEventCreate(&b), "cudaEventCreate");
  launch();  // (warm-up)
  check(cudaDeviceSynchronize(), "warm-up");
  float best = 1e30f;
  for (int rep = 0; rep < 3; ++rep) {
    check(cudaEventRecord(a), "cudaEventRecord");
    launch();
    check(cudaEventRecord(b), "cudaEventRecord");
    check(cudaEventSynchronize(b), "cudaEventSynchronize");
    float ms = 0;
    check(cudaEventElapsedTime(&ms, a, b), "cudaEventElapsedTime");
    best = std::min(best, ms);
  }
  cudaEventDestroy(a);
  cudaEventDestroy(b);
  return best * 1e-3;
}

}  // namespace

MatrixTimes matrix_times(std::size_t n) {
  using namespace twobody;
  std::mt19937_64 rng(4242);
  std::uniform_real_distribution<double> u(0.0, 1.0);
  double* x[3];
  for (auto& p : x) {
    std::vector<double> h(n);
    for (auto& v : h) v = u(rng);
    check(cudaMalloc(&p, n * sizeof(double)), "cudaMalloc");
    check(cudaMemcpy(p, h.data(), n * sizeof(double), cudaMemcpyHostToDevice), "cudaMemcpy");
  }
  cuda::DeviceSet s{};
  for (int d = 0; d < 3; ++d) s.x64[d] = x[d];
  s.n = static_cast<std::uint32_t>(n);
  MatrixTimes t;
  t.bytes = double(n) * double(n) * sizeof(double);
  double* out = nullptr;
  check(cudaMalloc(&out, n * n * sizeof(double)), "cudaMalloc (matrix)");
  const Euclidean<3> f{};
  t.tiles = best_of_three([&] {
    for (std::size_t r0 = 0; r0 < n; r0 += cuda::kMatrixMaxLaunchRows) {
      const auto rows = static_cast<std::uint32_t>(std::min<std::size_t>(cuda::kMatrixMaxLaunchRows, n - r0));
      cuda::launch_matrix_tiles<3>(s, s, f, static_cast<std::uint32_t>(r0), rows, out + r0 * n, nullptr);
    }
  });
  t.naive = best_of_three([&] {
    const dim3 block(32, 8), grid(static_cast<unsigned>((n + 31) / 32), static_cast<unsigned>((n + 7) / 8));
    cuda::matrix_naive_kernel<3><<<grid, block>>>(s, s, f, 0u, static_cast<std::uint32_t>(n), out);
  });
  t.memset = best_of_three([&] { check(cudaMemsetAsync(out, 1, n * n * sizeof(double)), "cudaMemsetAsync"); });
  // The bus: 1 GiB (or the matrix, if smaller) into pinned memory.
  const std::size_t copy_bytes = std::min<std::size_t>(n * n * sizeof(double), std::size_t(1) << 30);
  void* pinned = nullptr;
  check(cudaMallocHost(&pinned, copy_bytes), "cudaMallocHost");
  t.d2h = best_of_three([&] { check(cudaMemcpyAsync(pinned, out, copy_bytes, cudaMemcpyDeviceToHost), "cudaMemcpyAsync"); });
  t.d2h_bytes = double(copy_bytes);
  cudaFreeHost(pinned);
  cudaFree(out);
  for (auto& p : x) cudaFree(p);
  return t;
}
