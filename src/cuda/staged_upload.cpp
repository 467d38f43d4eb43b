#include "twobody/detail/cuda/staged_upload.hpp"
#include "twobody/detail/cuda/staged_widening.hpp"
#include "twobody/detail/cuda/staging_start_up.hpp"

#include <cuda_runtime.h>
#include <omp.h>

#include <algorithm>
#include <atomic>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "twobody/detail/cuda/cuda_check.hpp"

namespace twobody::cuda {

namespace {

constexpr std::size_t kChunk = std::size_t(32) << 20;      // bytes a staging buffer holds
constexpr std::size_t kPinFrom = std::size_t(16) << 20;     // a copy this large makes the staging
constexpr std::size_t kStagedFrom = std::size_t(1) << 20;   // smaller copies: cudaMemcpy
constexpr std::size_t kMinPiece = std::size_t(512) << 10;   // a piece of a copy, at least
constexpr int kMaxDevices = 64;
constexpr int kFillThreads = 8;  // host threads filling a buffer (memory bandwidth, not cores)

// Two pinned buffers of one device and the events of the copies that read them, made at its
// first staged upload and kept for the process (pinning costs milliseconds; the process's
// uploads reuse them). One upload at a time a device.
struct Staging {
  std::mutex m;
  std::atomic<bool> made{false};
  void* buffer[2] = {nullptr, nullptr};
  cudaEvent_t drained[2] = {nullptr, nullptr};
};

Staging& staging(int device) {
  static Staging each[kMaxDevices];
  return each[device];
}

bool staged_uploads() {
  static const bool on = [] {
    const char* v = std::getenv("TWOBODY_STAGED_UPLOAD");
    return !(v && std::string(v) == "0");
  }();
  return on;
}

// This device's staging; null when the copy should be a cudaMemcpy. Copies from 1 MiB take a
// staging already made (the warm-up pins it); only those from 16 MiB make it, since pinning its
// 64 MB costs more than the driver's pageable path loses on a few megabytes (7.7 GB/s measured).
Staging* staging_for(std::size_t bytes) {
  int device = 0;
  TWOBODY_CUDA_CHECK(cudaGetDevice(&device));
  if (bytes < kStagedFrom || !staged_uploads() || device >= kMaxDevices) return nullptr;
  Staging& s = staging(device);
  if (bytes < kPinFrom && !s.made.load(std::memory_order_acquire)) return nullptr;
  return &s;
}

// The pieces a copy of `bytes` goes through the two buffers in: about a quarter of it (so that
// filling one piece overlaps the copy engine's draining of the last one even for a few megabytes:
// 10^6 points' coordinates are three 8 MB copies), at most a buffer, a whole number of 64 KiB.
std::size_t piece_for(std::size_t bytes) {
  constexpr std::size_t kAlign = std::size_t(64) << 10;
  const std::size_t quarter = (bytes / 4 + kAlign - 1) / kAlign * kAlign;
  return std::clamp(quarter, kMinPiece, kChunk);
}

// The buffers and events, made once (a failure part way keeps what was made for the next try);
// then no copy of an earlier, failed call may still be using them.
void make(Staging& s) {
  if (s.made.load(std::memory_order_relaxed)) {
    for (int k = 0; k < 2; ++k) TWOBODY_CUDA_CHECK(cudaEventSynchronize(s.drained[k]));
    return;
  }
  for (int k = 0; k < 2; ++k) {
    if (!s.buffer[k]) TWOBODY_CUDA_CHECK(cudaHostAlloc(&s.buffer[k], kChunk, cudaHostAllocPortable));
    if (!s.drained[k]) TWOBODY_CUDA_CHECK(cudaEventCreateWithFlags(&s.drained[k], cudaEventDisableTiming));
  }
  s.made.store(true, std::memory_order_release);
}

// n bytes from `from` to `to` on `threads` host threads.
void parallel_copy(unsigned char* to, const unsigned char* from, std::size_t n, int threads) {
  const std::size_t piece = (n + static_cast<std::size_t>(threads) - 1) / static_cast<std::size_t>(threads);
#pragma omp parallel for num_threads(threads) schedule(static)
  for (int t = 0; t < threads; ++t) {
    const std::size_t first = std::min(n, static_cast<std::size_t>(t) * piece);
    const std::size_t last = std::min(n, first + piece);
    if (last > first) std::memcpy(to + first, from + first, last - first);
  }
}

// A copy of `bytes`: its device's staging, made and locked into `lock`; or null, the copy done by
// cudaMemcpy, when it is not staged.
Staging* staged_copy(void* dst, const void* src, std::size_t bytes, cudaMemcpyKind kind, std::unique_lock<std::mutex>& lock) {
  Staging* s = staging_for(bytes);
  if (!s) {
    TWOBODY_CUDA_CHECK(cudaMemcpy(dst, src, bytes, kind));
    return nullptr;
  }
  lock = std::unique_lock<std::mutex>(s->m);
  make(*s);
  return s;
}

int copy_threads() { return std::max(1, std::min(kFillThreads, omp_get_max_threads())); }

}  // namespace

void prepare_staging() {
  Staging* s = staging_for(kPinFrom);
  if (!s) return;
  const std::lock_guard<std::mutex> lock(s->m);
  if (!s->made.load(std::memory_order_relaxed)) make(*s);
}

namespace {

// The way back of `bytes` from device `src` through the staging: the copy engine fills one buffer
// while `empty(at, buffer, n)` (the host's threads) empties the other.
template <class Empty>
void staged_download(Staging& s, const void* src, std::size_t bytes, Empty&& empty) {
  const auto* from = static_cast<const unsigned char*>(src);
  // Piece c goes through buffer c % 2: its copy is queued once the host has emptied that buffer
  // of piece c − 2, so the copy engine fills one buffer while the threads empty the other.
  const std::size_t piece = piece_for(bytes);
  const std::size_t chunks = (bytes + piece - 1) / piece;
  const auto queue = [&](std::size_t c) {
    const std::size_t at = c * piece, n = std::min(piece, bytes - at);
    TWOBODY_CUDA_CHECK(cudaMemcpyAsync(s.buffer[c % 2], from + at, n, cudaMemcpyDeviceToHost, cudaStreamLegacy));
    TWOBODY_CUDA_CHECK(cudaEventRecord(s.drained[c % 2], cudaStreamLegacy));
  };
  queue(0);
  for (std::size_t c = 0; c < chunks; ++c) {
    if (c + 1 < chunks) queue(c + 1);
    TWOBODY_CUDA_CHECK(cudaEventSynchronize(s.drained[c % 2]));
    const std::size_t at = c * piece;
    empty(at, static_cast<const unsigned char*>(s.buffer[c % 2]), std::min(piece, bytes - at));
  }
}

// n floats widened into `to` on `threads` host threads.
void parallel_widen(double* to, const float* from, std::size_t n, int threads) {
  const std::size_t piece = (n + static_cast<std::size_t>(threads) - 1) / static_cast<std::size_t>(threads);
#pragma omp parallel for num_threads(threads) schedule(static)
  for (int t = 0; t < threads; ++t) {
    const std::size_t first = std::min(n, static_cast<std::size_t>(t) * piece);
    const std::size_t last = std::min(n, first + piece);
    for (std::size_t i = first; i < last; ++i) to[i] = static_cast<double>(from[i]);
  }
}

}  // namespace

void download_bytes(void* dst, const void* src, std::size_t bytes) {
  if (bytes == 0) return;
  std::unique_lock<std::mutex> lock;
  Staging* staged = staged_copy(dst, src, bytes, cudaMemcpyDeviceToHost, lock);
  if (!staged) return;
  auto* to = static_cast<unsigned char*>(dst);
  const int threads = copy_threads();
  staged_download(*staged, src, bytes, [&](std::size_t at, const unsigned char* buffer, std::size_t n) {
    parallel_copy(to + at, buffer, n, threads);
  });
}

void download_widened(double* dst, const float* src, std::size_t count) {
  if (count == 0) return;
  const std::size_t bytes = count * sizeof(float);
  Staging* staged = staging_for(bytes);
  const int threads = copy_threads();
  if (!staged) {
    std::vector<float> values(count);
    TWOBODY_CUDA_CHECK(cudaMemcpy(values.data(), src, bytes, cudaMemcpyDeviceToHost));
    parallel_widen(dst, values.data(), count, threads);
    return;
  }
  const std::unique_lock<std::mutex> lock(staged->m);
  make(*staged);
  // (a piece is a multiple of a float's size: every piece holds whole floats)
  staged_download(*staged, src, bytes, [&](std::size_t at, const unsigned char* buffer, std::size_t n) {
    parallel_widen(dst + at / sizeof(float), reinterpret_cast<const float*>(buffer), n / sizeof(float), threads);
  });
}

void fault_in(void* p, std::size_t bytes) {
  constexpr std::size_t kPage = 4096;
  auto* b = static_cast<unsigned char*>(p);
  const auto pages = static_cast<std::ptrdiff_t>((bytes + kPage - 1) / kPage);
#pragma omp parallel for schedule(static)
  for (std::ptrdiff_t k = 0; k < pages; ++k) b[static_cast<std::size_t>(k) * kPage] = 0;
}

void upload_bytes(void* dst, const void* src, std::size_t bytes) {
  if (bytes == 0) return;
  std::unique_lock<std::mutex> lock;
  Staging* staged = staged_copy(dst, src, bytes, cudaMemcpyHostToDevice, lock);
  if (!staged) return;
  Staging& s = *staged;
  const auto* from = static_cast<const unsigned char*>(src);
  auto* to = static_cast<unsigned char*>(dst);
  const int threads = copy_threads();
  bool used[2] = {false, false};
  const std::size_t piece = piece_for(bytes);
  for (std::size_t at = 0, k = 0; at < bytes; at += piece, k ^= 1) {
    const std::size_t n = std::min(piece, bytes - at);
    // The copy that last read this buffer is done before it is filled again.
    if (used[k]) TWOBODY_CUDA_CHECK(cudaEventSynchronize(s.drained[k]));
    auto* buffer = static_cast<unsigned char*>(s.buffer[k]);
    parallel_copy(buffer, from + at, n, threads);
    // On the legacy stream: after the allocation (cudaMallocAsync there) and in order with the
    // run's other uploads, as cudaMemcpy would be.
    TWOBODY_CUDA_CHECK(cudaMemcpyAsync(to + at, buffer, n, cudaMemcpyHostToDevice, cudaStreamLegacy));
    TWOBODY_CUDA_CHECK(cudaEventRecord(s.drained[k], cudaStreamLegacy));
    used[k] = true;
  }
  for (int k = 0; k < 2; ++k)
    if (used[k]) TWOBODY_CUDA_CHECK(cudaEventSynchronize(s.drained[k]));
}

}  // namespace twobody::cuda
