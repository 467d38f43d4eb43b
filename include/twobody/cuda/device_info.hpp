#pragma once
// What the planner reads off the current device (once per device: cuda_backend.cpp).
#include <cstddef>
#include <string>

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

}  // namespace twobody::cuda
