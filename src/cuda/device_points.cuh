#pragma once
// One point set on the device: its float64 coordinates as given (the exact rule's), their float32
// copies shifted to the frame's centre (the proxies'), weights and jackknife labels.
#include <cstdint>
#include <vector>

#include "twobody/detail/cuda/cuda_check.hpp"
#include "twobody/detail/cuda/device_buffer.hpp"
#include "twobody/detail/cuda/grid_index.cuh"
#include "twobody/detail/cuda/pair_output.cuh"
#include "twobody/points.hpp"

namespace twobody::cuda {

// x - shift, rounded to float32 on the device (only the float64 coordinates cross the bus).
template <int D>
__global__ void shifted_float_kernel(DeviceSet s, GridPointArrays<D> dst) {
  const std::uint32_t i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= s.n) return;
#pragma unroll
  for (int d = 0; d < D; ++d) dst.x[d][i] = static_cast<float>(s.x64[d][i] - dst.shift[d]);
}

// One point set on the device, float32 (shifted by `shift`) and float64 (as given).
template <int D>
struct DevicePoints {
  std::vector<DeviceBuffer<float>> f32;
  std::vector<DeviceBuffer<double>> f64;
  DeviceBuffer<double> w;
  DeviceBuffer<std::int32_t> region;
  DeviceSet view{};

  DevicePoints(const PointSet& p, const std::vector<double>& shift, bool weights, bool regions = false) {
    const std::size_t n = p.size();
    view.n = static_cast<std::uint32_t>(n);
    GridPointArrays<D> dst{};
    for (int d = 0; d < D; ++d) {
      f32.emplace_back(n);
      f64.emplace_back(n);
      f64.back().upload(p.coord(d).data(), n);
      view.x[d] = dst.x[d] = f32.back().get();
      view.x64[d] = f64.back().get();
      dst.shift[d] = shift[d];
    }
    if (weights) {
      w = DeviceBuffer<double>(n);
      w.upload(p.weights().data(), n);
      view.w = w.get();
    }
    if (regions) {
      region = DeviceBuffer<std::int32_t>(n);
      region.upload(p.regions().data(), n);
      view.region = region.get();
    }
    if (n) {
      shifted_float_kernel<D><<<grid_detail::blocks_for(n), 256>>>(view, dst);
      TWOBODY_CUDA_CHECK_LAUNCH("shifted_float_kernel");
    }
  }
};

}  // namespace twobody::cuda
