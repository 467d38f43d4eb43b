#pragma once
// An owning device allocation, freed on scope exit. Allocations come from the device's stream-
// ordered memory pool (cudaMallocAsync on the legacy stream), which keeps freed memory for the
// next run: a short run would otherwise spend most of its time in cudaFree, which synchronises
// and unmaps (measured: ~20 ms of a 26 ms run on 10^6 points, H100).
#include <atomic>
#include <cstddef>
#include <vector>

#include "twobody/detail/cuda/cuda_check.hpp"
#include "twobody/detail/cuda/staged_upload.hpp"
#include "twobody/device_memory.hpp"

namespace twobody::cuda {

// Once per device: let the default pool keep what is freed instead of returning it at every sync.
inline void retain_pool_memory() {
  static std::atomic<bool> done[64] = {};  // (runs on several host threads at once)
  int dev = 0;
  TWOBODY_CUDA_CHECK(cudaGetDevice(&dev));
  if (dev < 64 && done[dev]) return;
  cudaMemPool_t pool;
  TWOBODY_CUDA_CHECK(cudaDeviceGetDefaultMemPool(&pool, dev));
  unsigned long long keep = ~0ull;
  TWOBODY_CUDA_CHECK(cudaMemPoolSetAttribute(pool, cudaMemPoolAttrReleaseThreshold, &keep));
  if (dev < 64) done[dev] = true;
}

// Device memory a run can still take: what the driver reports free, plus what this device's pool
// keeps reserved but unused. retain_pool_memory makes the pool keep what runs free, and
// cudaMemGetInfo counts that as used: without it a second run in one process (Python, the
// correlation functions' counts) would see its own predecessor's buffers as taken. At most the
// budget of set_device_memory_limit (--device-memory), when one is set: every piece a run sizes
// from this (chunks, blocks, batches, tiles) is then planned to fit in it.
inline std::size_t available_device_bytes() {
  std::size_t free_b = 0, total_b = 0;
  TWOBODY_CUDA_CHECK(cudaMemGetInfo(&free_b, &total_b));
  int dev = 0;
  TWOBODY_CUDA_CHECK(cudaGetDevice(&dev));
  cudaMemPool_t pool;
  TWOBODY_CUDA_CHECK(cudaDeviceGetDefaultMemPool(&pool, dev));
  unsigned long long reserved = 0, used = 0;
  TWOBODY_CUDA_CHECK(cudaMemPoolGetAttribute(pool, cudaMemPoolAttrReservedMemCurrent, &reserved));
  TWOBODY_CUDA_CHECK(cudaMemPoolGetAttribute(pool, cudaMemPoolAttrUsedMemCurrent, &used));
  const std::size_t available = free_b + static_cast<std::size_t>(reserved > used ? reserved - used : 0);
  const std::size_t budget = device_memory_limit();  // (--device-memory: plan as if the device had no more)
  return budget > 0 && budget < available ? budget : available;
}

template <class T>
class DeviceBuffer {
 public:
  DeviceBuffer() = default;
  explicit DeviceBuffer(std::size_t n) : n_(n) {
    if (n) {
      retain_pool_memory();
      TWOBODY_CUDA_CHECK(cudaMallocAsync(reinterpret_cast<void**>(&p_), n * sizeof(T), cudaStreamLegacy));
    }
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
    if (p_) cudaFreeAsync(p_, cudaStreamLegacy);
  }
  T* get() const { return p_; }
  std::size_t size() const { return n_; }
  void upload(const std::vector<T>& h) { upload(h.data(), h.size()); }
  // (Large arrays through pinned staging buffers: staged_upload.hpp.)
  void upload(const T* h, std::size_t n) {
    if (n) upload_bytes(p_, h, n * sizeof(T));
  }
  void download(T* h, std::size_t n) const {
    if (n) TWOBODY_CUDA_CHECK(cudaMemcpy(h, p_, n * sizeof(T), cudaMemcpyDeviceToHost));
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
