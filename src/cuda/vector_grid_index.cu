// The vector grid's index and units on the device (vector_grid_index.cuh).
#include <cub/device/device_radix_sort.cuh>
#include <cub/device/device_reduce.cuh>
#include <cub/device/device_scan.cuh>

#include <algorithm>
#include <bit>

#include <string>

#include "twobody/detail/cuda/cuda_check.hpp"
#include "twobody/detail/cuda/vector_grid_index.cuh"
#include "twobody/detail/cuda/vector_grid_runs.hpp"

namespace twobody::cuda {

namespace {

constexpr int kThreads = 256;

unsigned blocks(std::size_t n) {
  return static_cast<unsigned>(std::clamp<std::size_t>((n + kThreads - 1) / kThreads, 1, std::size_t(1) << 20));
}

// Grid-stride loops: n may exceed the blocks launched.
__global__ void cell_keys_kernel(VectorGridGeometry g, const double* rows, std::size_t n, int dim, std::uint64_t* keys,
                                 std::uint32_t* index) {
  for (std::size_t i = blockIdx.x * static_cast<std::size_t>(blockDim.x) + threadIdx.x; i < n;
       i += static_cast<std::size_t>(gridDim.x) * blockDim.x) {
    keys[i] = vector_grid_key(g, rows + i * static_cast<std::size_t>(dim));
    index[i] = static_cast<std::uint32_t>(i);
  }
}

__global__ void gather_rows_kernel(const double* rows, const std::uint32_t* order, std::size_t n, int dim, double* out) {
  const std::size_t total = n * static_cast<std::size_t>(dim);
  for (std::size_t e = blockIdx.x * static_cast<std::size_t>(blockDim.x) + threadIdx.x; e < total;
       e += static_cast<std::size_t>(gridDim.x) * blockDim.x) {
    const std::size_t p = e / static_cast<std::size_t>(dim), k = e % static_cast<std::size_t>(dim);
    out[e] = rows[static_cast<std::size_t>(order[p]) * static_cast<std::size_t>(dim) + k];
  }
}

// 1 where a chunk starts.
__global__ void chunk_flags_kernel(const std::uint64_t* keys, std::size_t n, std::uint32_t* flag) {
  for (std::size_t p = blockIdx.x * static_cast<std::size_t>(blockDim.x) + threadIdx.x; p < n;
       p += static_cast<std::size_t>(gridDim.x) * blockDim.x)
    flag[p] = vector_grid_chunk_start(keys, p) ? 1u : 0u;
}

__global__ void chunk_starts_kernel(const std::uint32_t* flag, const std::uint32_t* at, std::size_t n, std::uint32_t* q0) {
  for (std::size_t p = blockIdx.x * static_cast<std::size_t>(blockDim.x) + threadIdx.x; p < n;
       p += static_cast<std::size_t>(gridDim.x) * blockDim.x)
    if (flag[p]) q0[at[p]] = static_cast<std::uint32_t>(p);
}

struct RunArgs {
  VectorGridGeometry g;
  VectorGridKeys keys;
  std::uint64_t piece;
  const std::uint32_t* chunk_q0;
  std::size_t chunks;
};

__global__ void count_units_kernel(RunArgs r, unsigned long long* units, unsigned long long* pairs) {
  for (std::size_t ch = blockIdx.x * static_cast<std::size_t>(blockDim.x) + threadIdx.x; ch < r.chunks;
       ch += static_cast<std::size_t>(gridDim.x) * blockDim.x) {
    const std::uint32_t q0 = r.chunk_q0[ch], qn = vector_grid_chunk_rows(r.keys, q0);
    unsigned long long u = 0, p = 0;
    vector_grid_runs(r.g, r.keys, q0, [&](std::uint32_t p0, std::uint32_t p1, bool triangle) {
      u += (p1 - p0 + r.piece - 1) / r.piece;
      p += vector_grid_run_pairs(q0, qn, p0, p1, triangle);
    });
    units[ch] = u;
    pairs[ch] = p;
  }
}

__global__ void fill_units_kernel(RunArgs r, const unsigned long long* first, VectorGridUnit* units, std::uint32_t* work) {
  for (std::size_t ch = blockIdx.x * static_cast<std::size_t>(blockDim.x) + threadIdx.x; ch < r.chunks;
       ch += static_cast<std::size_t>(gridDim.x) * blockDim.x) {
    const std::uint32_t q0 = r.chunk_q0[ch], qn = vector_grid_chunk_rows(r.keys, q0);
    unsigned long long at = first[ch];
    vector_grid_runs(r.g, r.keys, q0, [&](std::uint32_t p0, std::uint32_t p1, bool triangle) {
      for (std::uint64_t s = p0; s < p1; s += r.piece) {
        VectorGridUnit u;
        u.q0 = q0;
        u.qn = static_cast<std::uint16_t>(qn);
        u.p0 = static_cast<std::uint32_t>(s);
        u.p1 = static_cast<std::uint32_t>(s + r.piece < p1 ? s + r.piece : p1);
        u.triangle = triangle ? 1 : 0;
        units[at] = u;
        // Sort key: the work qn x partners (at most 32 x 2^20 < 2^26) from the top, so that an
        // ascending sort puts the heaviest first.
        work[at] = (1u << 26) - 1 - qn * (u.p1 - u.p0);
        ++at;
      }
    });
  }
}

__global__ void iota_kernel(std::uint32_t* v, std::size_t n) {
  for (std::size_t i = blockIdx.x * static_cast<std::size_t>(blockDim.x) + threadIdx.x; i < n;
       i += static_cast<std::size_t>(gridDim.x) * blockDim.x)
    v[i] = static_cast<std::uint32_t>(i);
}

template <class T>
T last_of(const DeviceBuffer<T>& v, std::size_t n) {
  T x{};
  if (n) TWOBODY_CUDA_CHECK(cudaMemcpy(&x, v.get() + n - 1, sizeof x, cudaMemcpyDeviceToHost));
  return x;
}

}  // namespace

DeviceVectorGridSet sort_vector_grid_set(const double* rows, std::size_t n, int dim, const VectorGridGeometry& g) {
  DeviceVectorGridSet s;
  s.n = n;
  s.keys = DeviceBuffer<std::uint64_t>(n);
  s.order = DeviceBuffer<std::uint32_t>(n);
  s.rows = DeviceBuffer<double>(n * static_cast<std::size_t>(dim));
  if (n == 0) return s;
  DeviceBuffer<std::uint64_t> keys(n);
  DeviceBuffer<std::uint32_t> index(n);
  cell_keys_kernel<<<blocks(n), kThreads>>>(g, rows, n, dim, keys.get(), index.get());
  TWOBODY_CUDA_CHECK_LAUNCH("cell_keys_kernel");
  // Keys below the product of the cells (<= 2^62): only their bits are sorted.
  std::uint64_t total = 1;
  for (int t = 0; t < g.m; ++t) total *= static_cast<std::uint64_t>(g.cells[t]);
  const int end_bit = std::max(1, static_cast<int>(std::bit_width(total - 1)));
  std::size_t bytes = 0;
  TWOBODY_CUDA_CHECK(cub::DeviceRadixSort::SortPairs(nullptr, bytes, keys.get(), s.keys.get(), index.get(), s.order.get(),
                                                     n, 0, end_bit));
  DeviceBuffer<unsigned char> temp(bytes);
  TWOBODY_CUDA_CHECK(cub::DeviceRadixSort::SortPairs(temp.get(), bytes, keys.get(), s.keys.get(), index.get(),
                                                     s.order.get(), n, 0, end_bit));
  gather_rows_kernel<<<blocks(n * static_cast<std::size_t>(dim)), kThreads>>>(rows, s.order.get(), n, dim, s.rows.get());
  TWOBODY_CUDA_CHECK_LAUNCH("gather_rows_kernel");
  return s;
}

void list_vector_grid_units(DeviceVectorGrid& grid, const VectorGridGeometry& g, bool self, std::size_t piece,
                            std::size_t max_units) {
  const DeviceVectorGridSet& a = grid.a;
  const DeviceVectorGridSet& b = self ? grid.a : grid.b;
  const std::size_t n = a.n;
  if (n == 0 || b.n == 0) return;
  // Chunks: flags, their exclusive sum (n < 2^31: 32 bits hold it), the starts.
  DeviceBuffer<std::uint32_t> flag(n), at(n);
  chunk_flags_kernel<<<blocks(n), kThreads>>>(a.keys.get(), n, flag.get());
  TWOBODY_CUDA_CHECK_LAUNCH("chunk_flags_kernel");
  std::size_t bytes = 0;
  TWOBODY_CUDA_CHECK(cub::DeviceScan::ExclusiveSum(nullptr, bytes, flag.get(), at.get(), n));
  DeviceBuffer<unsigned char> temp(bytes);
  TWOBODY_CUDA_CHECK(cub::DeviceScan::ExclusiveSum(temp.get(), bytes, flag.get(), at.get(), n));
  grid.chunks = static_cast<std::uint64_t>(last_of(at, n)) + last_of(flag, n);
  DeviceBuffer<std::uint32_t> chunk_q0(grid.chunks);
  chunk_starts_kernel<<<blocks(n), kThreads>>>(flag.get(), at.get(), n, chunk_q0.get());
  TWOBODY_CUDA_CHECK_LAUNCH("chunk_starts_kernel");

  RunArgs r{g, VectorGridKeys{a.keys.get(), n, b.keys.get(), b.n, self}, std::max<std::uint64_t>(piece, 1), chunk_q0.get(),
            grid.chunks};
  DeviceBuffer<unsigned long long> units(grid.chunks), pairs(grid.chunks), first(grid.chunks), sums(2);
  count_units_kernel<<<blocks(grid.chunks), kThreads>>>(r, units.get(), pairs.get());
  TWOBODY_CUDA_CHECK_LAUNCH("count_units_kernel");
  std::size_t b1 = 0, b2 = 0;
  TWOBODY_CUDA_CHECK(cub::DeviceReduce::Sum(nullptr, b1, pairs.get(), sums.get(), grid.chunks));
  TWOBODY_CUDA_CHECK(cub::DeviceScan::ExclusiveSum(nullptr, b2, units.get(), first.get(), grid.chunks));
  temp = DeviceBuffer<unsigned char>(std::max(b1, b2));
  TWOBODY_CUDA_CHECK(cub::DeviceReduce::Sum(temp.get(), b1, pairs.get(), sums.get(), grid.chunks));
  TWOBODY_CUDA_CHECK(cub::DeviceScan::ExclusiveSum(temp.get(), b2, units.get(), first.get(), grid.chunks));
  grid.candidates = last_of(sums, 1);
  grid.n_units = last_of(first, grid.chunks) + last_of(units, grid.chunks);
  if (grid.n_units > max_units) {
    grid.refusal = "the vector grid would list " + std::to_string(grid.n_units) + " units, more than its " +
                   std::to_string(max_units) + " (28 bytes each)";
    return;
  }
  if (grid.n_units == 0) return;
  grid.units = DeviceBuffer<VectorGridUnit>(grid.n_units);
  DeviceBuffer<std::uint32_t> work(grid.n_units), work_sorted(grid.n_units), index(grid.n_units);
  fill_units_kernel<<<blocks(grid.chunks), kThreads>>>(r, first.get(), grid.units.get(), work.get());
  TWOBODY_CUDA_CHECK_LAUNCH("fill_units_kernel");
  iota_kernel<<<blocks(grid.n_units), kThreads>>>(index.get(), grid.n_units);
  TWOBODY_CUDA_CHECK_LAUNCH("iota_kernel");
  grid.queue = DeviceBuffer<std::uint32_t>(grid.n_units);
  bytes = 0;
  TWOBODY_CUDA_CHECK(cub::DeviceRadixSort::SortPairs(nullptr, bytes, work.get(), work_sorted.get(), index.get(),
                                                     grid.queue.get(), grid.n_units, 0, 26));
  temp = DeviceBuffer<unsigned char>(bytes);
  TWOBODY_CUDA_CHECK(cub::DeviceRadixSort::SortPairs(temp.get(), bytes, work.get(), work_sorted.get(), index.get(),
                                                     grid.queue.get(), grid.n_units, 0, 26));
}

}  // namespace twobody::cuda
