#pragma once
// An owning device allocation (cudaMalloc), freed on scope exit.
#include <cstddef>
#include <vector>

#include "twobody/cuda/cuda_check.hpp"

namespace twobody::cuda {

template <class T>
class DeviceBuffer {
 public:
  DeviceBuffer() = default;
  explicit DeviceBuffer(std::size_t n) : n_(n) {
    if (n) TWOBODY_CUDA_CHECK(cudaMalloc(&p_, n * sizeof(T)));
  }
  explicit DeviceBuffer(const std::vector<T>& host) : DeviceBuffer(host.size()) { upload(host); }
  DeviceBuffer(const DeviceBuffer&) = delete;
  DeviceBuffer& operator=(const DeviceBuffer&) = delete;
  DeviceBuffer(DeviceBuffer&& o) noexcept : p_(o.p_), n_(o.n_) { o.p_ = nullptr; o.n_ = 0; }
  DeviceBuffer& operator=(DeviceBuffer&& o) noexcept {
    std::swap(p_, o.p_);
    std::swap(n_, o.n_);
    return *this;
  }
  ~DeviceBuffer() {
    if (p_) cudaFree(p_);
  }
  T* get() const { return p_; }
  std::size_t size() const { return n_; }
  void upload(const std::vector<T>& h) {
    if (!h.empty()) TWOBODY_CUDA_CHECK(cudaMemcpy(p_, h.data(), h.size() * sizeof(T), cudaMemcpyHostToDevice));
  }
  void upload(const T* h, std::size_t n) {
    if (n) TWOBODY_CUDA_CHECK(cudaMemcpy(p_, h, n * sizeof(T), cudaMemcpyHostToDevice));
  }
  std::vector<T> download() const {
    std::vector<T> h(n_);
    if (n_) TWOBODY_CUDA_CHECK(cudaMemcpy(h.data(), p_, n_ * sizeof(T), cudaMemcpyDeviceToHost));
    return h;
  }
  void zero() {
    if (n_) TWOBODY_CUDA_CHECK(cudaMemset(p_, 0, n_ * sizeof(T)));
  }

 private:
  T* p_ = nullptr;
  std::size_t n_ = 0;
};

}  // namespace twobody::cuda
