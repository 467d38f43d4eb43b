#pragma once
// The compact cell index built on the GPU (seed 002's compact binning; seed 004 §3): each point's
// cell id, a CUB radix sort of (cell, index) — stable, so the cell order is reproducible — the
// start of every cell from the sorted ids (one offset array, O(N + cells) memory whatever the
// clustering), and the points gathered into cell order, float32 (shifted) and float64.
// Then the work queue (seed 004 §3.3): cells weighed by their pair evaluations, sorted heaviest
// first, and cut into units of at most 32 (or, in dense cells, 64) anchors, one unit per warp.
#include <algorithm>
#include <cstdint>
#include <vector>

#include "twobody/detail/cuda/cuda_check.hpp"
#include "twobody/detail/cuda/device_buffer.hpp"
#include "twobody/detail/cuda/grid_shape.cuh"
#include "twobody/detail/cuda/pair_output.cuh"

namespace twobody::cuda {


// Where the gather writes one set in cell order.
template <int D>
struct GridPointArrays {
  float* x[D];
  double* x64[D];
  double* w;
  std::int32_t* region;
  double shift[D];
};

namespace grid_detail {

inline unsigned blocks_for(std::size_t n, int threads = 256) {
  return static_cast<unsigned>(std::max<std::size_t>(1, (n + threads - 1) / threads));
}

template <int D>
__global__ void gather_kernel(DeviceSet src, const std::uint32_t* order, GridPointArrays<D> dst) {
  const std::uint32_t k = blockIdx.x * blockDim.x + threadIdx.x;
  if (k >= src.n) return;
  const std::uint32_t o = order[k];
#pragma unroll
  for (int d = 0; d < D; ++d) {
    const double x = src.x64[d][o];
    dst.x64[d][k] = x;
    dst.x[d][k] = static_cast<float>(x - dst.shift[d]);
  }
  if (src.w) dst.w[k] = src.w[o];
  if (src.region) dst.region[k] = src.region[o];
}

}  // namespace grid_detail

// Sorts one set by cell, and within a cell by the float32 coordinate along the last axis (CUB
// radix sort of ((cell id, coordinate), index)): order[k] is the index of the k-th
// point in cell order, start[c] the first sorted index of cell c, start[total] = n. Compiled
// once in the library (src/cuda/grid_index.cu), so that CUB stays out of the headers a user's
// .cu file includes.
void sort_by_cell(const GridShape& g, const DeviceSet& src, std::uint32_t* order, std::uint32_t* start);

// Points per cell (no sorting): the occupancy the planner weighs before it chooses the cells.
std::vector<std::uint32_t> count_cells(const GridShape& g, const DeviceSet& src);

// Sorts one set along a Morton (Z-order) curve over the box [lo, lo + extent) (30 bits of cell
// coordinates, interleaved), so that consecutive points are close together: the tensor-core
// histograms take each item's anchors about their centre (tensor_histogram_tiles.cuh).
void sort_by_morton(int dim, const double* lo, const double* extent, const DeviceSet& src, std::uint32_t* order);

// One point set in another order on the device: float32 (shifted) and float64 coordinates, and
// weights and regions where the source has them, gathered from the source by `order`.
template <int D>
struct SortedDeviceSet {
  std::vector<DeviceBuffer<float>> f32;
  std::vector<DeviceBuffer<double>> f64;
  DeviceBuffer<double> w;
  DeviceBuffer<std::int32_t> region;
  DeviceBuffer<std::uint32_t> order;  // order[k]: the caller's index of sorted point k
  DeviceSet view{};

  explicit SortedDeviceSet(const DeviceSet& src) : order(src.n) { view.n = src.n; }

  // After `order` is filled: the points gathered into it.
  void gather(const DeviceSet& src, const double* shift) {
    using namespace grid_detail;
    const std::uint32_t n = src.n;
    GridPointArrays<D> dst{};
    for (int d = 0; d < D; ++d) {
      f32.emplace_back(n);
      f64.emplace_back(n);
      view.x[d] = dst.x[d] = f32.back().get();
      view.x64[d] = dst.x64[d] = f64.back().get();
      dst.shift[d] = shift[d];
    }
    if (src.w) {
      w = DeviceBuffer<double>(n);
      view.w = dst.w = w.get();
    }
    if (src.region) {
      region = DeviceBuffer<std::int32_t>(n);
      view.region = dst.region = region.get();
    }
    if (n == 0) return;
    gather_kernel<D><<<blocks_for(n), 256>>>(src, order.get(), dst);
    TWOBODY_CUDA_CHECK_LAUNCH("gather_kernel");
  }
};

// One point set in cell order on the device.
template <int D>
struct DeviceGridSet : SortedDeviceSet<D> {
  DeviceBuffer<std::uint32_t> start;  // total + 1

  DeviceGridSet(const GridShape& g, const DeviceSet& src, const double* shift)
      : SortedDeviceSet<D>(src), start(std::size_t(g.total) + 1) {
    if (src.n == 0)
      start.zero();
    else
      sort_by_cell(g, src, this->order.get(), start.get());
    this->gather(src, shift);
  }
};

// One point set in Morton order on the device (sort_by_morton).
template <int D>
struct DeviceMortonSet : SortedDeviceSet<D> {
  DeviceMortonSet(const DeviceSet& src, const double* shift, const double* lo, const double* extent)
      : SortedDeviceSet<D>(src) {
    if (src.n) sort_by_morton(D, lo, extent, src, this->order.get());
    this->gather(src, shift);
  }
};

// The work queue of a grid traversal: units (cell, first anchor) heaviest cell first, and the
// exact number of pair evaluations.
struct GridWorkQueue {
  DeviceBuffer<uint2> units;
  unsigned long long n_units = 0;
  unsigned long long evaluations = 0;

  // unit_anchors: anchors per unit, 32 (one a lane) or 64 (two a lane, dense cells).
  GridWorkQueue(const GridShape& g, const std::uint32_t* a_start, const std::uint32_t* b_start, bool is_auto,
                std::uint32_t unit_anchors = 32);
};

}  // namespace twobody::cuda
