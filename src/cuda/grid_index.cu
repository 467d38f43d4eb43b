// The parts of the GPU cell index that use CUB (see twobody/cuda/grid_index.cuh).
#include <cub/device/device_radix_sort.cuh>
#include <cub/device/device_reduce.cuh>
#include <cub/device/device_scan.cuh>

#include <algorithm>
#include <cmath>

#include "twobody/detail/cuda/grid_index.cuh"

namespace twobody::cuda {

namespace grid_detail {

// The sort key: the cell id, then the float32 coordinate along the last axis (its bits made
// order-preserving), so that within a cell — and along a run of cells consecutive on the last
// axis — the float32 coordinates the kernels compare are sorted, and a partner window along that
// axis is one range found by binary search.
__global__ void cell_ids_kernel(GridShape g, DeviceSet s, unsigned long long* keys, std::uint32_t* vals) {
  const std::uint32_t i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= s.n) return;
  const std::uint32_t u = __float_as_uint(s.x[g.dim - 1][i]);
  const std::uint32_t ordered = (u & 0x80000000u) ? ~u : (u | 0x80000000u);
  keys[i] = (static_cast<unsigned long long>(cell_of(g, s.x64, i)) << 32) | ordered;
  vals[i] = i;
}

// Morton codes: 30 bits, 30 / dim a coordinate, interleaved (the first axis most significant).
__global__ void morton_kernel(int dim, double lo0, double lo1, double lo2, double s0, double s1, double s2, DeviceSet s,
                              std::uint32_t* keys, std::uint32_t* vals) {
  const std::uint32_t i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= s.n) return;
  const int bits = 30 / dim;
  const double lo[3] = {lo0, lo1, lo2}, scale[3] = {s0, s1, s2};
  std::uint32_t q[3] = {0, 0, 0};
  for (int d = 0; d < dim && d < 3; ++d) {
    const double t = floor((s.x64[d][i] - lo[d]) * scale[d]);
    const double top = static_cast<double>((1u << bits) - 1u);
    q[d] = static_cast<std::uint32_t>(t < 0 ? 0.0 : t > top ? top : t);
  }
  std::uint32_t key = 0;
  for (int b = bits - 1; b >= 0; --b)
    for (int d = 0; d < dim && d < 3; ++d) key = (key << 1) | ((q[d] >> b) & 1u);
  keys[i] = key;
  vals[i] = i;
}

__global__ void count_cells_kernel(GridShape g, DeviceSet s, std::uint32_t* counts) {
  const std::uint32_t i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < s.n) atomicAdd(&counts[cell_of(g, s.x64, i)], 1u);
}

// start[c] = first sorted index of cell c; start[total] = n.
__global__ void cell_starts_kernel(const unsigned long long* keys, std::uint32_t n, std::uint32_t total, std::uint32_t* start) {
  const std::uint32_t i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  const std::uint32_t c = static_cast<std::uint32_t>(keys[i] >> 32);
  const std::uint32_t first = i == 0 ? 0 : static_cast<std::uint32_t>(keys[i - 1] >> 32) + 1;
  for (std::uint32_t k = first; k <= c; ++k) start[k] = i;
  if (i == n - 1)
    for (std::uint32_t k = c + 1; k <= total; ++k) start[k] = n;
}

// Pair evaluations of every anchor cell: its triangle (auto) and its neighbour runs (the half
// shell for auto: cells of higher id only; the full shell for cross).
__global__ void workload_kernel(GridShape g, const std::uint32_t* a_start, const std::uint32_t* b_start, bool is_auto,
                                std::uint32_t unit, unsigned long long* work, std::uint32_t* cell, std::uint32_t* units) {
  const std::uint32_t c = blockIdx.x * blockDim.x + threadIdx.x;
  if (c >= g.total) return;
  const unsigned long long na = a_start[c + 1] - a_start[c];
  unsigned long long partners = 0;
  if (na) {
    for_each_neighbour_run(g, c, [&](std::uint32_t lo, std::uint32_t hi, const NeighbourRun&) {
      if (is_auto) lo = max(lo, c + 1);
      if (lo <= hi) partners += b_start[hi + 1] - b_start[lo];
    });
  }
  work[c] = na * partners + (is_auto ? na * (na ? na - 1 : 0) / 2 : 0);
  cell[c] = c;
  units[c] = static_cast<std::uint32_t>((na + unit - 1) / unit);
}

__global__ void permute_kernel(std::uint32_t n, const std::uint32_t* order, const std::uint32_t* in, std::uint32_t* out) {
  const std::uint32_t k = blockIdx.x * blockDim.x + threadIdx.x;
  if (k < n) out[k] = in[order[k]];
}

__global__ void expand_units_kernel(std::uint32_t cells, const std::uint32_t* sorted_cell, const std::uint32_t* unit_first,
                                    const std::uint32_t* a_start, std::uint32_t unit, uint2* units) {
  const std::uint32_t k = blockIdx.x * blockDim.x + threadIdx.x;
  if (k >= cells) return;
  const std::uint32_t c = sorted_cell[k];
  std::uint32_t u = unit_first[k];
  for (std::uint32_t a = a_start[c]; a < a_start[c + 1]; a += unit) units[u++] = make_uint2(c, a);
}

}  // namespace grid_detail

std::vector<std::uint32_t> count_cells(const GridShape& g, const DeviceSet& src) {
  using namespace grid_detail;
  DeviceBuffer<std::uint32_t> counts(g.total);
  counts.zero();
  if (src.n) {
    count_cells_kernel<<<blocks_for(src.n), 256>>>(g, src, counts.get());
    TWOBODY_CUDA_CHECK_LAUNCH("count_cells_kernel");
  }
  return counts.download();
}

void sort_by_cell(const GridShape& g, const DeviceSet& src, std::uint32_t* order, std::uint32_t* start) {
  using namespace grid_detail;
  const std::uint32_t n = src.n;
  // Double-buffered (`order` one of the values' buffers): the sort's temporary storage is then a
  // few kilobytes instead of another copy of the keys and values, 12 bytes a point — what lets
  // 10^9 points be indexed in one piece on a 141 GB card (chunk_points counts 24 bytes a point).
  DeviceBuffer<unsigned long long> keys(n), keys_alt(n);
  DeviceBuffer<std::uint32_t> vals(n);
  cell_ids_kernel<<<blocks_for(n), 256>>>(g, src, keys.get(), vals.get());
  TWOBODY_CUDA_CHECK_LAUNCH("cell_ids_kernel");
  int end_bit = 33;
  while (end_bit < 64 && (std::uint64_t(1) << (end_bit - 32)) < g.total) ++end_bit;
  cub::DoubleBuffer<unsigned long long> k(keys.get(), keys_alt.get());
  cub::DoubleBuffer<std::uint32_t> v(vals.get(), order);
  std::size_t temp_bytes = 0;
  TWOBODY_CUDA_CHECK(cub::DeviceRadixSort::SortPairs(nullptr, temp_bytes, k, v, n, 0, end_bit));
  DeviceBuffer<unsigned char> temp(temp_bytes);
  TWOBODY_CUDA_CHECK(cub::DeviceRadixSort::SortPairs(temp.get(), temp_bytes, k, v, n, 0, end_bit));
  if (v.Current() != order)
    TWOBODY_CUDA_CHECK(cudaMemcpyAsync(order, v.Current(), std::size_t(n) * sizeof(std::uint32_t), cudaMemcpyDeviceToDevice));
  cell_starts_kernel<<<blocks_for(n), 256>>>(k.Current(), n, g.total, start);
  TWOBODY_CUDA_CHECK_LAUNCH("cell_starts_kernel");
}

void sort_by_morton(int dim, const double* lo, const double* extent, const DeviceSet& src, std::uint32_t* order) {
  using namespace grid_detail;
  const std::uint32_t n = src.n;
  const int d = std::min(dim, 3);  // (beyond three axes the first three order the points)
  const int bits = 30 / d;
  double l[3] = {0, 0, 0}, sc[3] = {0, 0, 0};
  for (int k = 0; k < d; ++k) {
    l[k] = lo[k];
    sc[k] = extent[k] > 0 ? std::ldexp(1.0, bits) / extent[k] : 0.0;
  }
  DeviceBuffer<std::uint32_t> keys(n), keys_sorted(n), vals(n);
  morton_kernel<<<blocks_for(n), 256>>>(d, l[0], l[1], l[2], sc[0], sc[1], sc[2], src, keys.get(), vals.get());
  TWOBODY_CUDA_CHECK_LAUNCH("morton_kernel");
  std::size_t temp_bytes = 0;
  TWOBODY_CUDA_CHECK(cub::DeviceRadixSort::SortPairs(nullptr, temp_bytes, keys.get(), keys_sorted.get(), vals.get(), order,
                                                     n, 0, bits * d));
  DeviceBuffer<unsigned char> temp(temp_bytes);
  TWOBODY_CUDA_CHECK(cub::DeviceRadixSort::SortPairs(temp.get(), temp_bytes, keys.get(), keys_sorted.get(), vals.get(),
                                                     order, n, 0, bits * d));
}

GridWorkQueue::GridWorkQueue(const GridShape& g, const std::uint32_t* a_start, const std::uint32_t* b_start, bool is_auto,
                             std::uint32_t unit_anchors) {
  using namespace grid_detail;
  const std::uint32_t cells = g.total;
  DeviceBuffer<unsigned long long> work(cells), work_sorted(cells), total(1);
  DeviceBuffer<std::uint32_t> cell(cells), cell_sorted(cells), nunits(cells), unit_first(cells);
  workload_kernel<<<blocks_for(cells), 256>>>(g, a_start, b_start, is_auto, unit_anchors, work.get(), cell.get(),
                                              nunits.get());
  TWOBODY_CUDA_CHECK_LAUNCH("workload_kernel");
  std::size_t t1 = 0, t2 = 0, t3 = 0;
  TWOBODY_CUDA_CHECK(cub::DeviceReduce::Sum(nullptr, t1, work.get(), total.get(), cells));
  TWOBODY_CUDA_CHECK(cub::DeviceRadixSort::SortPairsDescending(nullptr, t2, work.get(), work_sorted.get(), cell.get(),
                                                               cell_sorted.get(), cells));
  TWOBODY_CUDA_CHECK(cub::DeviceScan::ExclusiveSum(nullptr, t3, nunits.get(), unit_first.get(), cells));
  DeviceBuffer<unsigned char> temp(std::max({t1, t2, t3}));
  TWOBODY_CUDA_CHECK(cub::DeviceReduce::Sum(temp.get(), t1, work.get(), total.get(), cells));
  evaluations = total.download()[0];
  TWOBODY_CUDA_CHECK(cub::DeviceRadixSort::SortPairsDescending(temp.get(), t2, work.get(), work_sorted.get(), cell.get(),
                                                               cell_sorted.get(), cells));
  // Units per cell in the sorted order, then where each cell's units begin.
  DeviceBuffer<std::uint32_t> nunits_sorted(cells);
  permute_kernel<<<blocks_for(cells), 256>>>(cells, cell_sorted.get(), nunits.get(), nunits_sorted.get());
  TWOBODY_CUDA_CHECK_LAUNCH("permute_kernel");
  TWOBODY_CUDA_CHECK(cub::DeviceScan::ExclusiveSum(temp.get(), t3, nunits_sorted.get(), unit_first.get(), cells));
  std::uint32_t last[2] = {0, 0};
  if (cells) {
    TWOBODY_CUDA_CHECK(cudaMemcpy(&last[0], unit_first.get() + cells - 1, sizeof last[0], cudaMemcpyDeviceToHost));
    TWOBODY_CUDA_CHECK(cudaMemcpy(&last[1], nunits_sorted.get() + cells - 1, sizeof last[1], cudaMemcpyDeviceToHost));
  }
  n_units = static_cast<unsigned long long>(last[0]) + last[1];
  units = DeviceBuffer<uint2>(n_units);
  expand_units_kernel<<<blocks_for(cells), 256>>>(cells, cell_sorted.get(), unit_first.get(), a_start, unit_anchors,
                                                  units.get());
  TWOBODY_CUDA_CHECK_LAUNCH("expand_units_kernel");
}

}  // namespace twobody::cuda
