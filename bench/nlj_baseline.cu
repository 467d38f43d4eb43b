// See nlj_baseline.hpp.
#include <cuda_runtime.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>

#include "nlj_baseline.hpp"

namespace {

constexpr int kThreads = 256;  // R rows a block
constexpr int kTile = 1024;    // S rows a shared-memory tile

void check(cudaError_t e, const char* what) {
  if (e != cudaSuccess) {
    std::fprintf(stderr, "%s: %s\n", what, cudaGetErrorString(e));
    std::exit(1);
  }
}

// counting: out == nullptr (each thread adds its matches to *count); writing: each match at an
// index one atomic a warp step reserves.
__global__ void nlj_kernel(const double* __restrict__ rt, const double* __restrict__ rx, int nr, const double* __restrict__ st,
                           const double* __restrict__ sx, int ns, double w, unsigned long long* count, uint2* out) {
  __shared__ double tile_t[kTile], tile_x[kTile];
  const int i = blockIdx.x * kThreads + threadIdx.x;
  const bool row = i < nr;
  const double t = row ? rt[i] : 0, x = row ? rx[i] : 0;
  unsigned long long mine = 0;
  const unsigned lane = threadIdx.x % 32;
  for (int s0 = 0; s0 < ns; s0 += kTile) {
    const int n = ns - s0 < kTile ? ns - s0 : kTile;
    __syncthreads();
    for (int k = threadIdx.x; k < n; k += kThreads) {
      tile_t[k] = st[s0 + k];
      tile_x[k] = sx[s0 + k];
    }
    __syncthreads();
    for (int k = 0; k < n; ++k) {
      const bool hit = row && t < tile_t[k] && fabs(x - tile_x[k]) < w;
      if (!out) {
        mine += hit;
        continue;
      }
      const unsigned mask = __ballot_sync(0xffffffffu, hit);
      if (!mask) continue;
      unsigned long long base = 0;
      if (lane == 0) base = atomicAdd(count, static_cast<unsigned long long>(__popc(mask)));
      base = __shfl_sync(0xffffffffu, base, 0);
      if (hit) out[base + __popc(mask & ((1u << lane) - 1u))] = make_uint2(static_cast<unsigned>(i), static_cast<unsigned>(s0 + k));
    }
  }
  if (!out && mine) atomicAdd(count, mine);
}

}  // namespace

NljResult shared_memory_nlj(const std::vector<double>& rt, const std::vector<double>& rx, const std::vector<double>& st,
                            const std::vector<double>& sx, double w) {
  const int nr = static_cast<int>(rt.size()), ns = static_cast<int>(st.size());
  double *drt, *drx, *dst, *dsx;
  unsigned long long* count;
  for (auto [p, v] : {std::pair{&drt, &rt}, std::pair{&drx, &rx}, std::pair{&dst, &st}, std::pair{&dsx, &sx}}) {
    check(cudaMalloc(p, v->size() * sizeof(double)), "cudaMalloc");
    check(cudaMemcpy(*p, v->data(), v->size() * sizeof(double), cudaMemcpyHostToDevice), "cudaMemcpy");
  }
  check(cudaMalloc(&count, sizeof *count), "cudaMalloc");
  NljResult r;
  const int blocks = (nr + kThreads - 1) / kThreads;
  for (int run = 0; run < 2; ++run) {  // (the first warms up)
    check(cudaDeviceSynchronize(), "sync");
    const auto t0 = std::chrono::steady_clock::now();
    check(cudaMemset(count, 0, sizeof *count), "cudaMemset");
    nlj_kernel<<<blocks, kThreads>>>(drt, drx, nr, dst, dsx, ns, w, count, nullptr);
    unsigned long long total = 0;
    check(cudaMemcpy(&total, count, sizeof total, cudaMemcpyDeviceToHost), "count");
    uint2* out = nullptr;
    check(cudaMalloc(&out, (total ? total : 1) * sizeof(uint2)), "cudaMalloc");
    check(cudaMemset(count, 0, sizeof *count), "cudaMemset");
    nlj_kernel<<<blocks, kThreads>>>(drt, drx, nr, dst, dsx, ns, w, count, out);
    std::vector<uint2> h(total);
    check(cudaMemcpy(h.data(), out, total * sizeof(uint2), cudaMemcpyDeviceToHost), "pairs");
    r.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    cudaFree(out);
    r.pairs.clear();
    r.pairs.reserve(total);
    for (const uint2& p : h) r.pairs.emplace_back(p.x, p.y);
  }
  for (double* p : {drt, drx, dst, dsx}) cudaFree(p);
  cudaFree(count);
  return r;
}
