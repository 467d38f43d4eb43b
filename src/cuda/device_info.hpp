#pragma once
// What the planner reads off the current device (once per device: cuda_backend.cpp).
#include <cstddef>
#include <string>

#include "twobody/detail/cuda/copies_model.hpp"

namespace twobody::cuda {

struct DeviceInfo {
  int sms = 0;
  std::size_t smem_optin = 0;  // shared memory a block may opt in to
  std::string name;
  std::size_t smem_per_sm = 0;
  int threads_per_sm = 0;
  int blocks_per_sm = 0;
  std::size_t smem_reserved = 0;  // the runtime's share of each block's shared memory
  std::size_t l2_bytes = 0;
};
DeviceInfo device_info();

// Blocks of the counting tiles' histogram kernel a multiprocessor holds by its registers (the
// occupancy API, shared memory aside), for `dim` 1–3: the copies model's register limit, in the run
// and in --explain alike. Each dimension's is defined in run_on_device.cuh and instantiated beside
// that dimension's kernels (src/CMakeLists.txt); cuda_backend.cpp picks one by `dim`.
template <int D>
int counting_tiles_histogram_blocks_in();
int counting_tiles_histogram_blocks(int dim);

// The limits the copies model weighs (copies_model.hpp), from the device's properties.
inline SmLimits sm_limits(const DeviceInfo& info) {
  SmLimits lim;
  lim.sms = info.sms;
  lim.smem_per_sm = info.smem_per_sm;
  lim.smem_per_block = info.smem_optin;
  lim.threads_per_sm = info.threads_per_sm;
  lim.blocks_per_sm = info.blocks_per_sm;
  lim.reserved_per_block = info.smem_reserved;
  return lim;
}

}  // namespace twobody::cuda
