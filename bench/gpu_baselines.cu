// Reference points for the benchmark table, in the same run as twobody's kernels:
//   - the card's FP32 FMA ceiling (independent FMA chains, every lane busy);
//   - seed 000's naive Algorithm 1 (one thread per point, partners read from global memory, one
//     global atomic per pair);
//   - a plain Algorithm 3 (register anchor, shared-memory partner tile, one shared histogram per
//     block, float32 sqrt binning: fast but not exact);
//   - a plain pair list (type III): the same tiles, one global atomic per pair in range claiming
//     its slot (what the engine's page pool replaces), float32, not exact.
#include <cuda_runtime.h>

#include <cstdio>
#include <cstdlib>
#include <vector>

#include "gpu_baselines.hpp"

namespace {

void check(cudaError_t e, const char* what) {
  if (e != cudaSuccess) {
    std::fprintf(stderr, "CUDA error in %s: %s\n", what, cudaGetErrorString(e));
    std::exit(1);
  }
}

__global__ void fma_ceiling_kernel(float* out, int iters) {
  float a0 = threadIdx.x, a1 = a0 + 1, a2 = a0 + 2, a3 = a0 + 3, a4 = a0 + 4, a5 = a0 + 5, a6 = a0 + 6, a7 = a0 + 7;
  const float m = 0.999999f, c = 1e-7f;
  for (int i = 0; i < iters; ++i) {
    a0 = fmaf(a0, m, c); a1 = fmaf(a1, m, c); a2 = fmaf(a2, m, c); a3 = fmaf(a3, m, c);
    a4 = fmaf(a4, m, c); a5 = fmaf(a5, m, c); a6 = fmaf(a6, m, c); a7 = fmaf(a7, m, c);
  }
  out[blockIdx.x * blockDim.x + threadIdx.x] = a0 + a1 + a2 + a3 + a4 + a5 + a6 + a7;
}

// Shared-memory atomics, conflict-free (lane l's words in bank l), eight independent ones an
// iteration: the ceiling of any histogram that spends one shared atomic a pair.
__global__ void shared_atomic_ceiling_kernel(unsigned* out, int iters) {
  __shared__ unsigned h[8 * 256];
  for (int k = 0; k < 8; ++k) h[k * 256 + threadIdx.x] = 0;
  __syncthreads();
  unsigned* p = h + threadIdx.x;
  for (int i = 0; i < iters; ++i) {
#pragma unroll
    for (int k = 0; k < 8; ++k) atomicAdd(p + k * 256, 1u);
  }
  __syncthreads();
  unsigned s = 0;
  for (int k = 0; k < 8; ++k) s += h[k * 256 + threadIdx.x];
  out[blockIdx.x * blockDim.x + threadIdx.x] = s;
}

// mma.sync throughput, eight independent accumulators a warp: TF32 m16n8k8 (Half false) or FP16
// m16n8k16 (Half true), the two forms of the tensor-core counts (tensor_count_tiles.cuh).
template <bool Half>
__global__ void mma_ceiling_kernel(float* out, int iters) {
  float c[8][4] = {};
  const unsigned a0 = threadIdx.x, a1 = a0 * 3u, a2 = a0 * 5u, a3 = a0 * 7u;
  const unsigned b0 = a0 ^ 0x3c00u, b1 = a0 ^ 0x3800u;  // small finite operands either way
  for (int i = 0; i < iters; ++i) {
#pragma unroll
    for (int k = 0; k < 8; ++k) {
      if constexpr (Half)
        asm volatile(
            "mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32 {%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, {%0,%1,%2,%3};"
            : "+f"(c[k][0]), "+f"(c[k][1]), "+f"(c[k][2]), "+f"(c[k][3])
            : "r"(a0 & 0x3bff3bffu), "r"(a1 & 0x3bff3bffu), "r"(a2 & 0x3bff3bffu), "r"(a3 & 0x3bff3bffu),
              "r"(b0 & 0x3bff3bffu), "r"(b1 & 0x3bff3bffu));
      else
        asm volatile(
            "mma.sync.aligned.m16n8k8.row.col.f32.tf32.tf32.f32 {%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, {%0,%1,%2,%3};"
            : "+f"(c[k][0]), "+f"(c[k][1]), "+f"(c[k][2]), "+f"(c[k][3])
            : "r"(a0 & 0x3f7fe000u), "r"(a1 & 0x3f7fe000u), "r"(a2 & 0x3f7fe000u), "r"(a3 & 0x3f7fe000u),
              "r"(b0 & 0x3f7fe000u), "r"(b1 & 0x3f7fe000u));
    }
  }
  float s = 0.f;
  for (int k = 0; k < 8; ++k) s += c[k][0] + c[k][1] + c[k][2] + c[k][3];
  out[blockIdx.x * blockDim.x + threadIdx.x] = s;
}

__global__ void naive_sdh_kernel(const float* x, const float* y, const float* z, int n, float inv_w, int nbins,
                                 unsigned long long* hist) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  const float xi = x[i], yi = y[i], zi = z[i];
  for (int j = i + 1; j < n; ++j) {
    const float dx = xi - x[j], dy = yi - y[j], dz = zi - z[j];
    const int b = static_cast<int>(sqrtf(dx * dx + dy * dy + dz * dz) * inv_w);
    if (b < nbins) atomicAdd(&hist[b], 1ull);
  }
}

constexpr int kB = 256;

// Seed 000's Algorithm 3 walk: the thread's point i in registers, the blocks from its own on
// staged in shared memory, visit(i, j, d²) for every pair j > i (float32, plain arithmetic).
template <class Visit>
__device__ void alg3_pairs(const float* x, const float* y, const float* z, int n, Visit visit) {
  __shared__ float sx[kB], sy[kB], sz[kB];
  const int i = blockIdx.x * kB + threadIdx.x;
  const float xi = i < n ? x[i] : 0.f, yi = i < n ? y[i] : 0.f, zi = i < n ? z[i] : 0.f;
  for (int t = blockIdx.x; t * kB < n; ++t) {
    __syncthreads();
    const int j = t * kB + threadIdx.x;
    sx[threadIdx.x] = j < n ? x[j] : 0.f;
    sy[threadIdx.x] = j < n ? y[j] : 0.f;
    sz[threadIdx.x] = j < n ? z[j] : 0.f;
    __syncthreads();
    for (int k = 0; k < kB; ++k) {
      const int jj = t * kB + k;
      if (i < n && jj > i && jj < n) {
        const float dx = xi - sx[k], dy = yi - sy[k], dz = zi - sz[k];
        visit(i, jj, dx * dx + dy * dy + dz * dz);
      }
    }
  }
}

__global__ void alg3_sdh_kernel(const float* x, const float* y, const float* z, int n, float inv_w, int nbins,
                                unsigned long long* hist) {
  extern __shared__ unsigned s_hist[];
  for (int k = threadIdx.x; k < nbins; k += kB) s_hist[k] = 0;
  alg3_pairs(x, y, z, n, [&](int, int, float d2) {
    const int b = static_cast<int>(sqrtf(d2) * inv_w);
    if (b < nbins) atomicAdd(&s_hist[b], 1u);
  });
  __syncthreads();
  for (int k = threadIdx.x; k < nbins; k += kB)
    if (s_hist[k]) atomicAdd(&hist[k], static_cast<unsigned long long>(s_hist[k]));
}

__global__ void atomic_pair_list_kernel(const float* x, const float* y, const float* z, int n, float r2,
                                        unsigned long long* next, unsigned long long capacity, uint2* out) {
  alg3_pairs(x, y, z, n, [&](int i, int j, float d2) {
    if (d2 < r2) {
      const unsigned long long slot = atomicAdd(next, 1ull);
      if (slot < capacity) out[slot] = make_uint2(i, j);
    }
  });
}

struct Device3 {
  float *x = nullptr, *y = nullptr, *z = nullptr;
  unsigned long long* hist = nullptr;
  Device3(const std::vector<float>& hx, const std::vector<float>& hy, const std::vector<float>& hz, int nbins) {
    const size_t b = hx.size() * sizeof(float);
    check(cudaMalloc(&x, b), "cudaMalloc");
    check(cudaMalloc(&y, b), "cudaMalloc");
    check(cudaMalloc(&z, b), "cudaMalloc");
    check(cudaMalloc(&hist, nbins * sizeof(unsigned long long)), "cudaMalloc");
    check(cudaMemcpy(x, hx.data(), b, cudaMemcpyHostToDevice), "cudaMemcpy");
    check(cudaMemcpy(y, hy.data(), b, cudaMemcpyHostToDevice), "cudaMemcpy");
    check(cudaMemcpy(z, hz.data(), b, cudaMemcpyHostToDevice), "cudaMemcpy");
    check(cudaMemset(hist, 0, nbins * sizeof(unsigned long long)), "cudaMemset");
  }
  ~Device3() {
    cudaFree(x);
    cudaFree(y);
    cudaFree(z);
    cudaFree(hist);
  }
};

template <class Launch>
double time_ms(Launch&& launch) {
  cudaEvent_t a, b;
  check(cudaEventCreate(&a), "cudaEventCreate");
  check(cudaEventCreate(&b), "cudaEventCreate");
  check(cudaEventRecord(a), "cudaEventRecord");
  launch();
  check(cudaGetLastError(), "kernel launch");
  check(cudaEventRecord(b), "cudaEventRecord");
  check(cudaEventSynchronize(b), "cudaEventSynchronize");
  float ms = 0;
  check(cudaEventElapsedTime(&ms, a, b), "cudaEventElapsedTime");
  cudaEventDestroy(a);
  cudaEventDestroy(b);
  return ms;
}

}  // namespace

double fma_lanes_per_second() {
  int sms = 0;
  check(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, 0), "attribute");
  const int blocks = sms * 16, threads = 256, iters = 1 << 16;
  float* out;
  check(cudaMalloc(&out, sizeof(float) * blocks * threads), "cudaMalloc");
  fma_ceiling_kernel<<<blocks, threads>>>(out, 16);  // warm-up
  check(cudaDeviceSynchronize(), "warm-up");
  const double ms = time_ms([&] { fma_ceiling_kernel<<<blocks, threads>>>(out, iters); });
  cudaFree(out);
  return 8.0 * iters * blocks * threads / (ms * 1e-3);
}

double mma_per_second(bool half) {
  int sms = 0;
  check(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, 0), "attribute");
  const int blocks = sms * 8, threads = 256, iters = 1 << 13;
  float* out;
  check(cudaMalloc(&out, sizeof(float) * blocks * threads), "cudaMalloc");
  const auto launch = [&](int it) {
    if (half)
      mma_ceiling_kernel<true><<<blocks, threads>>>(out, it);
    else
      mma_ceiling_kernel<false><<<blocks, threads>>>(out, it);
  };
  launch(16);  // warm-up
  check(cudaDeviceSynchronize(), "warm-up");
  const double ms = time_ms([&] { launch(iters); });
  cudaFree(out);
  return 8.0 * iters * blocks * (threads / 32) / (ms * 1e-3);
}

double shared_atomic_lanes_per_second() {
  int sms = 0;
  check(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, 0), "attribute");
  const int blocks = sms * 8, threads = 256, iters = 1 << 14;
  unsigned* out;
  check(cudaMalloc(&out, sizeof(unsigned) * blocks * threads), "cudaMalloc");
  shared_atomic_ceiling_kernel<<<blocks, threads>>>(out, 16);  // warm-up
  check(cudaDeviceSynchronize(), "warm-up");
  const double ms = time_ms([&] { shared_atomic_ceiling_kernel<<<blocks, threads>>>(out, iters); });
  cudaFree(out);
  return 8.0 * iters * blocks * threads / (ms * 1e-3);
}

BaselineResult naive_sdh(const std::vector<float>& x, const std::vector<float>& y, const std::vector<float>& z,
                         double rmax, int nbins) {
  Device3 d(x, y, z, nbins);
  const int n = static_cast<int>(x.size());
  const float inv_w = static_cast<float>(nbins / rmax);
  const double ms = time_ms([&] { naive_sdh_kernel<<<(n + 255) / 256, 256>>>(d.x, d.y, d.z, n, inv_w, nbins, d.hist); });
  return {ms * 1e-3};
}

BaselineResult alg3_sdh(const std::vector<float>& x, const std::vector<float>& y, const std::vector<float>& z,
                        double rmax, int nbins) {
  Device3 d(x, y, z, nbins);
  const int n = static_cast<int>(x.size());
  const float inv_w = static_cast<float>(nbins / rmax);
  const size_t smem = nbins * sizeof(unsigned);
  check(cudaFuncSetAttribute(alg3_sdh_kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, static_cast<int>(smem)), "attr");
  const double ms = time_ms([&] { alg3_sdh_kernel<<<(n + kB - 1) / kB, kB, smem>>>(d.x, d.y, d.z, n, inv_w, nbins, d.hist); });
  return {ms * 1e-3};
}

BaselineResult atomic_pair_list(const std::vector<float>& x, const std::vector<float>& y, const std::vector<float>& z,
                                double r, std::size_t capacity, unsigned long long* found) {
  Device3 d(x, y, z, 1);
  const int n = static_cast<int>(x.size());
  uint2* out = nullptr;
  check(cudaMalloc(&out, capacity * sizeof(uint2)), "cudaMalloc");
  const float r2 = static_cast<float>(r * r);
  auto launch = [&] {
    check(cudaMemset(d.hist, 0, sizeof(unsigned long long)), "cudaMemset");
    atomic_pair_list_kernel<<<(n + kB - 1) / kB, kB>>>(d.x, d.y, d.z, n, r2, d.hist, capacity, out);
  };
  time_ms(launch);  // warm-up
  const double ms = time_ms(launch);
  check(cudaMemcpy(found, d.hist, sizeof *found, cudaMemcpyDeviceToHost), "cudaMemcpy");
  cudaFree(out);
  return {ms * 1e-3};
}
