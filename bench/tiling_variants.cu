// Seed 000's §5.1 experiment, on this GPU: the same type-I statistic (pairs within r, float32,
// one register counter a thread, reduced once per block) through each way of feeding partners to
// the anchors, and each load width:
//   Reg-SHM   anchor in registers, the partner block in shared memory (what the engine runs);
//   Reg-RoC   anchor in registers, partners read through the read-only (texture/L1) path, __ldg;
//   SHM-SHM   both blocks in shared memory (the anchor re-read from shared for every pair);
//   Shuffle   Algorithm 6: each lane loads one partner into a register, the warp passes them round
//             by __shfl_sync (no shared memory, no read-only cache);
// × layouts: three float arrays (three 4-byte loads), float2 + float (the seed's best on Pascal)
// and float4 (one 16-byte load). Plus §4.4.1's load-balanced intra-block schedule (thread i pairs
// with (i + j) mod B for B/2 steps) against the triangular one, timed on the intra-block pairs
// alone as the seed did. Blocks pair with the next nb/2 blocks circularly (the same balancing one
// level up), so that no block's row is longer than another's and the kernels compare, not tails.
// Every variant does the same float arithmetic, so every count must agree (checked).
#include <cuda_runtime.h>

#include <cstdio>
#include <cstdlib>
#include <vector>

#include "tiling_variants.hpp"

namespace {

void check(cudaError_t e, const char* what) {
  if (e != cudaSuccess) {
    std::fprintf(stderr, "CUDA error in %s: %s\n", what, cudaGetErrorString(e));
    std::exit(1);
  }
}

constexpr int kB = 256;  // block size = tile size

enum class Source { RegShm, RegRoc, ShmShm, Shuffle };
enum class Layout { Float, Float2, Float4 };

struct Points {
  const float *x, *y, *z;
  const float2* xy;
  const float4* xyzw;
  int n;  // a multiple of kB (padded with far points)
};

template <Layout L, bool ReadOnly>
__device__ __forceinline__ float3 load(const Points& p, int j) {
  if constexpr (L == Layout::Float) {
    if constexpr (ReadOnly) return make_float3(__ldg(p.x + j), __ldg(p.y + j), __ldg(p.z + j));
    return make_float3(p.x[j], p.y[j], p.z[j]);
  } else if constexpr (L == Layout::Float2) {
    const float2 a = ReadOnly ? __ldg(p.xy + j) : p.xy[j];
    return make_float3(a.x, a.y, ReadOnly ? __ldg(p.z + j) : p.z[j]);
  } else {
    const float4 a = ReadOnly ? __ldg(p.xyzw + j) : p.xyzw[j];
    return make_float3(a.x, a.y, a.z);
  }
}

// A block's tile in shared memory, in the layout's own shape (so that reading it back costs the
// layout's number of shared loads).
template <Layout L>
struct Tile {
  float x[L == Layout::Float ? kB : 1], y[L == Layout::Float ? kB : 1];
  float2 xy[L == Layout::Float2 ? kB : 1];
  float z[L == Layout::Float4 ? 1 : kB];
  float4 xyzw[L == Layout::Float4 ? kB : 1];
  __device__ void put(int k, float3 v) {
    if constexpr (L == Layout::Float) {
      x[k] = v.x;
      y[k] = v.y;
      z[k] = v.z;
    } else if constexpr (L == Layout::Float2) {
      xy[k] = make_float2(v.x, v.y);
      z[k] = v.z;
    } else {
      xyzw[k] = make_float4(v.x, v.y, v.z, 0.f);
    }
  }
  __device__ float3 get(int k) const {
    if constexpr (L == Layout::Float) return make_float3(x[k], y[k], z[k]);
    else if constexpr (L == Layout::Float2) return make_float3(xy[k].x, xy[k].y, z[k]);
    else return make_float3(xyzw[k].x, xyzw[k].y, xyzw[k].z);
  }
};

__device__ __forceinline__ unsigned within(float3 a, float3 b, float r2) {
  const float dx = __fsub_rn(a.x, b.x), dy = __fsub_rn(a.y, b.y), dz = __fsub_rn(a.z, b.z);
  const float d2 = __fmaf_rn(dz, dz, __fmaf_rn(dy, dy, __fmul_rn(dx, dx)));
  return d2 < r2 ? 1u : 0u;
}

// Inter: the block's anchors against the next nb/2 blocks (circularly; with nb even the last
// step only for the first half of the blocks). Intra: the block's own pairs, triangular or
// load-balanced.
template <Source S, Layout L, bool Inter, bool Intra, bool Balanced>
__global__ void __launch_bounds__(kB) pcf_kernel(Points p, float r2, int reps, unsigned long long* out) {
  __shared__ Tile<L> tile;
  __shared__ Tile<L> anchors;  // SHM-SHM only (and the intra-block tile)
  const int tid = threadIdx.x, lane = tid % 32;
  const int nb = p.n / kB, b = blockIdx.x;
  const float3 a = load<L, false>(p, b * kB + tid);
  anchors.put(tid, a);
  unsigned count = 0;
  if constexpr (Inter) {
    const int steps = nb / 2 - (nb % 2 == 0 && b >= nb / 2 ? 1 : 0);
    for (int t = 1; t <= steps; ++t) {
      const int base = ((b + t) % nb) * kB;
      if constexpr (S == Source::RegShm || S == Source::ShmShm) {
        __syncthreads();
        tile.put(tid, load<L, false>(p, base + tid));
        __syncthreads();
#pragma unroll 8
        for (int k = 0; k < kB; ++k) {
          // SHM-SHM re-reads the anchor from shared memory for every pair: the barrier keeps the
          // compiler from hoisting it into a register (which would make it Reg-SHM).
          if constexpr (S == Source::ShmShm) asm volatile("" ::: "memory");
          count += within(S == Source::ShmShm ? anchors.get(tid) : a, tile.get(k), r2);
        }
      } else if constexpr (S == Source::RegRoc) {
#pragma unroll 8
        for (int k = 0; k < kB; ++k) count += within(a, load<L, true>(p, base + k), r2);
      } else {
        for (int w = 0; w < kB; w += 32) {
          const float3 mine = load<L, false>(p, base + w + lane);
#pragma unroll 8
          for (int k = 0; k < 32; ++k) {
            const float3 o = make_float3(__shfl_sync(0xffffffffu, mine.x, k), __shfl_sync(0xffffffffu, mine.y, k),
                                         __shfl_sync(0xffffffffu, mine.z, k));
            count += within(a, o, r2);
          }
        }
      }
    }
  }
  if constexpr (Intra) {
    __syncthreads();
    // `reps` passes over the block's own pairs: one pass over 2^20 points is ~0.1 ms, too short
    // to time against a launch. The empty asm with a memory clobber makes each pass read the tile
    // again (the compiler may not fold the passes into one).
    for (int rep = 0; rep < reps; ++rep) {
      asm volatile("" ::: "memory");
      if constexpr (Balanced) {
        for (int j = 1; j <= kB / 2; ++j)
          if (j < kB / 2 || tid < kB / 2) count += within(a, anchors.get((tid + j) % kB), r2);
      } else {
        for (int k = tid + 1; k < kB; ++k) count += within(a, anchors.get(k), r2);
      }
    }
  }
  for (int off = 16; off > 0; off >>= 1) count += __shfl_down_sync(0xffffffffu, count, off);
  if (lane == 0) atomicAdd(out, static_cast<unsigned long long>(count));
}

struct DevicePoints {
  float *x = nullptr, *y = nullptr, *z = nullptr;
  float2* xy = nullptr;
  float4* xyzw = nullptr;
  unsigned long long* count = nullptr;
  int n = 0;
  explicit DevicePoints(const std::vector<float>& hx, const std::vector<float>& hy, const std::vector<float>& hz) {
    n = static_cast<int>((hx.size() + kB - 1) / kB * kB);
    // Padding: far points, far from one another too (distinct multiples of 10^6).
    std::vector<float> px(hx), py(hy), pz(hz);
    for (std::size_t k = hx.size(); k < static_cast<std::size_t>(n); ++k) {
      px.push_back(1e6f * static_cast<float>(k - hx.size() + 1));
      py.push_back(0.f);
      pz.push_back(0.f);
    }
    std::vector<float2> h2(n);
    std::vector<float4> h4(n);
    for (int k = 0; k < n; ++k) {
      h2[k] = make_float2(px[k], py[k]);
      h4[k] = make_float4(px[k], py[k], pz[k], 0.f);
    }
    const std::size_t b = n * sizeof(float);
    check(cudaMalloc(&x, b), "cudaMalloc");
    check(cudaMalloc(&y, b), "cudaMalloc");
    check(cudaMalloc(&z, b), "cudaMalloc");
    check(cudaMalloc(&xy, n * sizeof(float2)), "cudaMalloc");
    check(cudaMalloc(&xyzw, n * sizeof(float4)), "cudaMalloc");
    check(cudaMalloc(&count, sizeof(unsigned long long)), "cudaMalloc");
    check(cudaMemcpy(x, px.data(), b, cudaMemcpyHostToDevice), "cudaMemcpy");
    check(cudaMemcpy(y, py.data(), b, cudaMemcpyHostToDevice), "cudaMemcpy");
    check(cudaMemcpy(z, pz.data(), b, cudaMemcpyHostToDevice), "cudaMemcpy");
    check(cudaMemcpy(xy, h2.data(), n * sizeof(float2), cudaMemcpyHostToDevice), "cudaMemcpy");
    check(cudaMemcpy(xyzw, h4.data(), n * sizeof(float4), cudaMemcpyHostToDevice), "cudaMemcpy");
  }
  ~DevicePoints() {
    cudaFree(x);
    cudaFree(y);
    cudaFree(z);
    cudaFree(xy);
    cudaFree(xyzw);
    cudaFree(count);
  }
  Points view() const { return {x, y, z, xy, xyzw, n}; }
};

// Seconds of the kernel (best of three, after a warm-up) and its count.
template <Source S, Layout L, bool Inter, bool Intra, bool Balanced>
TilingResult time_variant(const DevicePoints& d, float r2, int reps = 1) {
  const int blocks = d.n / kB;
  cudaEvent_t e0, e1;
  check(cudaEventCreate(&e0), "cudaEventCreate");
  check(cudaEventCreate(&e1), "cudaEventCreate");
  TilingResult r{1e30, 0};
  for (int rep = 0; rep < 4; ++rep) {
    check(cudaMemset(d.count, 0, sizeof(unsigned long long)), "cudaMemset");
    check(cudaEventRecord(e0), "cudaEventRecord");
    pcf_kernel<S, L, Inter, Intra, Balanced><<<blocks, kB>>>(d.view(), r2, reps, d.count);
    check(cudaGetLastError(), "pcf_kernel launch");
    check(cudaEventRecord(e1), "cudaEventRecord");
    check(cudaEventSynchronize(e1), "cudaEventSynchronize");
    float ms = 0;
    check(cudaEventElapsedTime(&ms, e0, e1), "cudaEventElapsedTime");
    if (rep > 0 && ms * 1e-3 < r.seconds) r.seconds = ms * 1e-3;
    check(cudaMemcpy(&r.count, d.count, sizeof r.count, cudaMemcpyDeviceToHost), "cudaMemcpy");
  }
  cudaEventDestroy(e0);
  cudaEventDestroy(e1);
  return r;
}

template <Source S, Layout L>
TilingRow row(const char* source, const char* layout, const DevicePoints& d, float r2) {
  return {source, layout, time_variant<S, L, true, true, true>(d, r2)};
}

}  // namespace

std::vector<TilingRow> tiling_variants(const std::vector<float>& x, const std::vector<float>& y,
                                       const std::vector<float>& z, double r) {
  const DevicePoints d(x, y, z);
  const float r2 = static_cast<float>(r * r);
  std::vector<TilingRow> rows;
  rows.push_back(row<Source::RegShm, Layout::Float>("Reg-SHM", "float", d, r2));
  rows.push_back(row<Source::RegShm, Layout::Float2>("Reg-SHM", "float2", d, r2));
  rows.push_back(row<Source::RegShm, Layout::Float4>("Reg-SHM", "float4", d, r2));
  rows.push_back(row<Source::RegRoc, Layout::Float>("Reg-RoC", "float", d, r2));
  rows.push_back(row<Source::RegRoc, Layout::Float2>("Reg-RoC", "float2", d, r2));
  rows.push_back(row<Source::RegRoc, Layout::Float4>("Reg-RoC", "float4", d, r2));
  rows.push_back(row<Source::ShmShm, Layout::Float>("SHM-SHM", "float", d, r2));
  rows.push_back(row<Source::ShmShm, Layout::Float2>("SHM-SHM", "float2", d, r2));
  rows.push_back(row<Source::ShmShm, Layout::Float4>("SHM-SHM", "float4", d, r2));
  rows.push_back(row<Source::Shuffle, Layout::Float>("Shuffle (Alg. 6)", "float", d, r2));
  rows.push_back(row<Source::Shuffle, Layout::Float2>("Shuffle (Alg. 6)", "float2", d, r2));
  rows.push_back(row<Source::Shuffle, Layout::Float4>("Shuffle (Alg. 6)", "float4", d, r2));
  // §4.4.1 on the intra-block pairs alone (Reg-SHM float4's block tile), kIntraReps passes.
  rows.push_back({"intra-block triangular", "float4",
                  time_variant<Source::RegShm, Layout::Float4, false, true, false>(d, r2, kIntraReps), kIntraReps});
  rows.push_back({"intra-block balanced (4.4.1)", "float4",
                  time_variant<Source::RegShm, Layout::Float4, false, true, true>(d, r2, kIntraReps), kIntraReps});
  return rows;
}
