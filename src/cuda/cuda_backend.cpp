// The CUDA backend: device discovery and the dispatch of (metric, dimension) to the per-metric
// translation units (run_*.cu).
#include <memory>
#include <string>

#include "cuda/cuda_check.hpp"
#include "twobody/backend.hpp"
#include "twobody/metric_dispatch.hpp"

namespace twobody {
namespace cuda {

struct DeviceInfo {
  int sms = 0;
  std::size_t smem_optin = 0;
  std::string name;
};

DeviceInfo device_info() {
  int dev = 0;
  TWOBODY_CUDA_CHECK(cudaGetDevice(&dev));
  cudaDeviceProp prop{};
  TWOBODY_CUDA_CHECK(cudaGetDeviceProperties(&prop, dev));
  return {prop.multiProcessorCount, prop.sharedMemPerBlockOptin, prop.name};
}

template <class F>
Result run_on_device(const F& f, const Plan& plan);  // instantiated in run_*.cu

namespace {

class CudaBackend final : public Backend {
 public:
  explicit CudaBackend(std::string name) : device_(std::move(name)) {}
  std::string name() const override { return "cuda"; }
  std::string device() const override { return device_; }
  Result run(const Plan& plan) override {
    return visit_pair_function(*plan.stat, plan.a->dim(), [&](const auto& f) { return run_on_device(f, plan); });
  }

 private:
  std::string device_;
};

}  // namespace
}  // namespace cuda

std::unique_ptr<Backend> make_cuda_backend() {
  int n = 0;
  if (cudaGetDeviceCount(&n) != cudaSuccess || n == 0) {
    cudaGetLastError();  // clear the sticky "no device" error
    return nullptr;
  }
  return std::make_unique<cuda::CudaBackend>(cuda::device_info().name);
}

}  // namespace twobody
