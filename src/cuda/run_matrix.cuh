#pragma once
// Dense matrices on the device (matrix_kernel.cuh's tiles, seed 001) in row chunks, copied to the
// host while the next chunk is computed.
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <string>
#include <thread>
#include <vector>

#include "twobody/detail/cuda/cuda_check.hpp"
#include "twobody/detail/cuda/device_buffer.hpp"
#include "twobody/detail/cuda/device_points.cuh"
#include "twobody/detail/cuda/matrix_kernel.cuh"
#include "twobody/detail/cuda/tuning_policy.hpp"
#include "twobody/detail/engine/backend.hpp"

namespace twobody::cuda {

// The result page-locked for the copies' life (released on every way out).
struct HostRegistration {
  void* p = nullptr;
  HostRegistration() = default;
  HostRegistration(const HostRegistration&) = delete;
  HostRegistration& operator=(const HostRegistration&) = delete;
  ~HostRegistration() {
    if (p) cudaHostUnregister(p);
  }
};

// A pinned staging buffer.
struct PinnedBuffer {
  double* p = nullptr;
  PinnedBuffer() = default;
  PinnedBuffer(const PinnedBuffer&) = delete;
  PinnedBuffer& operator=(const PinnedBuffer&) = delete;
  ~PinnedBuffer() {
    if (p) cudaFreeHost(p);
  }
};

// The compute and copy streams of a matrix run, and their events.
struct MatrixStreams {
  cudaStream_t compute = nullptr, copy = nullptr;
  cudaEvent_t computed[2] = {}, copied[2] = {};
  ~MatrixStreams() {
    // On an error tiles and copies may still run: wait for them before the device buffers go
    // back to the pool and the staging buffers or the page-locked result are released (declared
    // before this, they are destroyed after it).
    if (compute) cudaStreamSynchronize(compute);
    if (copy) cudaStreamSynchronize(copy);
    for (int k = 0; k < 2; ++k) {
      if (computed[k]) cudaEventDestroy(computed[k]);
      if (copied[k]) cudaEventDestroy(copied[k]);
    }
    if (compute) cudaStreamDestroy(compute);
    if (copy) cudaStreamDestroy(copy);
  }
};

// n doubles from `from` to `to` on all host threads (one thread copies ~10 GB/s, below the bus: a
// piece a core).
inline void copy_on_host_threads(const double* from, double* to, std::size_t n) {
  const std::size_t parts = std::clamp<std::size_t>(std::thread::hardware_concurrency(), 1, 16);
  std::vector<std::thread> copiers;
  struct Joiner {  // joined on every way out (a failed thread start must not leave one joinable)
    std::vector<std::thread>& threads;
    ~Joiner() {
      for (auto& t : threads)
        if (t.joinable()) t.join();
    }
  } joiner{copiers};
  for (std::size_t q = 0; q < parts; ++q)
    copiers.emplace_back([=] {
      const std::size_t lo = n * q / parts, hi = n * (q + 1) / parts;
      std::copy(from + lo, from + hi, to + lo);
    });
}

// Dense matrices (matrix_kernel.cuh's tiles) in row chunks of about 256 MB
// (TuningPolicy::matrix_chunk_bytes), two in flight: while the tiles fill one chunk's device buffer, the
// copy engine moves the other's to the host through a pinned staging buffer, and host threads move
// the chunk before it from its staging buffer into the result. A matrix of one chunk up to 32 MB is
// copied once, plainly. Measured on the H100 host, 4.3 GB (bench/RESULTS.md): staged 0.52 s; the
// result page-locked in place (TuningPolicy::matrix_host registered, the copies then at the bus's 55 GB/s)
// 1.34 s, of which 1.2 s is locking pages that were never touched; plain copies into pageable
// memory (plain) 3.2 s.
template <class F>
Result run_matrix(const F& f, const Plan& plan) {
  constexpr int D = F::dim;
  const PointSet& A = *plan.a;
  const PointSet& B = *plan.b;
  // Rows and columns are 32-bit indices on the device, as in run_pairs.
  if (A.size() > 0xffffffffull || B.size() > 0xffffffffull)
    throw Error(ErrorKind::Resource, "the CUDA backend takes at most 2^32 - 1 points per set");
  const auto t_start = std::chrono::steady_clock::now();
  const auto ms_since = [](std::chrono::steady_clock::time_point t) {
    return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t).count();
  };
  const std::vector<double> no_shift(D, 0.0);
  DevicePoints<D> da(A, no_shift, false);
  std::unique_ptr<DevicePoints<D>> db_owner;
  if (!plan.is_auto()) db_owner = std::make_unique<DevicePoints<D>>(B, no_shift, false);
  const DeviceSet& va = da.view;
  const DeviceSet& vb = db_owner ? db_owner->view : da.view;
  Result r;
  r.output = OutputKind::Matrix;
  r.rows = A.size();
  r.cols = B.size();
  const double t_upload = ms_since(t_start);
  auto t_phase = std::chrono::steady_clock::now();
  r.matrix.resize(r.rows * r.cols);  // (not written: its pages are touched by the copies)
  r.info.pairs_evaluated = static_cast<std::uint64_t>(r.rows) * r.cols;
  if (r.matrix.empty()) return r;
  const double t_alloc = ms_since(t_phase);

  const std::size_t row_bytes = sizeof(double) * r.cols;
  const TuningPolicy policy = TuningPolicy::current();
  const std::size_t chunk_bytes = policy.matrix_chunk_bytes;
  const std::size_t rows_per_chunk =
      std::clamp<std::size_t>(chunk_bytes / row_bytes, 1, std::min<std::size_t>(r.rows, kMatrixMaxLaunchRows));
  const std::size_t chunks = (r.rows + rows_per_chunk - 1) / rows_per_chunk;
  const std::size_t total_bytes = r.matrix.size() * sizeof(double);
  enum class HostCopy { Plain, Registered, Staged } how =
      chunks == 1 && total_bytes <= (std::size_t(32) << 20) ? HostCopy::Plain : HostCopy::Staged;
  switch (policy.matrix_host) {
    case TuningPolicy::MatrixHost::Plain: how = HostCopy::Plain; break;
    case TuningPolicy::MatrixHost::Staged: how = HostCopy::Staged; break;
    case TuningPolicy::MatrixHost::Registered: how = HostCopy::Registered; break;
    case TuningPolicy::MatrixHost::Auto: break;
  }
  std::string host_note;
  t_phase = std::chrono::steady_clock::now();
  // Page-locks the result for the copies' life (released on every way out).
  HostRegistration registration;
  if (how == HostCopy::Registered) {
    const cudaError_t e = cudaHostRegister(r.matrix.data(), r.matrix.size() * sizeof(double), cudaHostRegisterDefault);
    if (e == cudaSuccess) {
      registration.p = r.matrix.data();
    } else {
      cudaGetLastError();
      how = HostCopy::Staged;
      host_note = std::string(" (cudaHostRegister: ") + cudaGetErrorString(e) + ")";
    }
  }
  const double t_register = ms_since(t_phase);
  const int nbuf = chunks > 1 && how != HostCopy::Plain ? 2 : 1;
  DeviceBuffer<double> dev[2];
  for (int k = 0; k < nbuf; ++k) dev[k] = DeviceBuffer<double>(rows_per_chunk * r.cols);
  PinnedBuffer staging[2];
  // (One staging buffer a device buffer; where pinned memory runs out, plain copies.)
  if (how == HostCopy::Staged)
    for (int k = 0; k < nbuf; ++k) {
      const cudaError_t e = cudaMallocHost(reinterpret_cast<void**>(&staging[k].p), rows_per_chunk * row_bytes);
      if (e != cudaSuccess) {
        cudaGetLastError();
        how = HostCopy::Plain;
        host_note = std::string(" (cudaMallocHost: ") + cudaGetErrorString(e) + ")";
        break;
      }
    }
  MatrixStreams st;
  TWOBODY_CUDA_CHECK(cudaStreamCreateWithFlags(&st.compute, cudaStreamNonBlocking));
  TWOBODY_CUDA_CHECK(cudaStreamCreateWithFlags(&st.copy, cudaStreamNonBlocking));
  for (int k = 0; k < 2; ++k) {
    TWOBODY_CUDA_CHECK(cudaEventCreateWithFlags(&st.computed[k], cudaEventDisableTiming));
    TWOBODY_CUDA_CHECK(cudaEventCreateWithFlags(&st.copied[k], cudaEventDisableTiming));
  }
  // The uploads went to the legacy stream, which a non-blocking stream does not wait for.
  TWOBODY_CUDA_CHECK(cudaStreamSynchronize(cudaStreamLegacy));
  t_phase = std::chrono::steady_clock::now();
  const auto first_row = [&](std::size_t c) { return c * rows_per_chunk; };
  const auto rows_of = [&](std::size_t c) { return std::min(rows_per_chunk, r.rows - first_row(c)); };
  // Staged: chunk c from its pinned buffer into the result (after its copy), on all host threads.
  const auto drain = [&](std::size_t c) {
    const int k = static_cast<int>(c % 2);
    TWOBODY_CUDA_CHECK(cudaEventSynchronize(st.copied[k]));
    copy_on_host_threads(staging[k].p, r.matrix.data() + first_row(c) * r.cols, rows_of(c) * r.cols);
  };
  for (std::size_t c = 0; c < chunks; ++c) {
    const int k = nbuf == 2 ? static_cast<int>(c % 2) : 0;
    const std::size_t bytes = rows_of(c) * row_bytes;
    // The buffer's previous chunk (c - 2) has left the device.
    TWOBODY_CUDA_CHECK(cudaStreamWaitEvent(st.compute, st.copied[k], 0));
    launch_matrix_tiles<D>(va, vb, f, static_cast<std::uint32_t>(first_row(c)), static_cast<std::uint32_t>(rows_of(c)),
                           dev[k].get(), st.compute);
    if (how == HostCopy::Plain) {
      TWOBODY_CUDA_CHECK(cudaStreamSynchronize(st.compute));
      TWOBODY_CUDA_CHECK(cudaMemcpy(r.matrix.data() + first_row(c) * r.cols, dev[k].get(), bytes, cudaMemcpyDeviceToHost));
      continue;
    }
    TWOBODY_CUDA_CHECK(cudaEventRecord(st.computed[k], st.compute));
    TWOBODY_CUDA_CHECK(cudaStreamWaitEvent(st.copy, st.computed[k], 0));
    double* to = how == HostCopy::Registered ? r.matrix.data() + first_row(c) * r.cols : staging[k].p;
    TWOBODY_CUDA_CHECK(cudaMemcpyAsync(to, dev[k].get(), bytes, cudaMemcpyDeviceToHost, st.copy));
    TWOBODY_CUDA_CHECK(cudaEventRecord(st.copied[k], st.copy));
    // While chunk c is computed and copied, chunk c - 1 goes from its staging buffer to the result
    // (its buffer is then free for chunk c + 1).
    if (how == HostCopy::Staged && c > 0) drain(c - 1);
  }
  if (how == HostCopy::Staged) drain(chunks - 1);
  TWOBODY_CUDA_CHECK(cudaStreamSynchronize(st.copy));
  TWOBODY_CUDA_CHECK(cudaStreamSynchronize(st.compute));
  const double t_fill = ms_since(t_phase);
  const char* mode = how == HostCopy::Plain ? "copied chunk by chunk into pageable memory"
                     : how == HostCopy::Registered
                         ? "two in flight, copied straight into the page-locked result"
                         : "two in flight through two pinned staging buffers";
  char buf[200];
  std::snprintf(buf, sizeof buf,
                "; phases: upload %.2f ms, result allocated %.2f ms, page-lock %.2f ms, tiles and copies %.2f ms (%.2f GB/s)",
                t_upload, t_alloc, t_register, t_fill, static_cast<double>(r.matrix.size() * sizeof(double)) / (t_fill * 1e6));
  r.info.plan = "dense matrix: seed 001 tiles of " + std::to_string(kMatrixSubtiles) + " subtiles of " +
                std::to_string(kMatrixRows) + " rows x 32 columns (a column's vector in registers, the tile's rows in "
                "shared memory); " + std::to_string(chunks) + (chunks == 1 ? " chunk of " : " chunks of ") +
                std::to_string(rows_per_chunk) + " rows, " + mode + host_note + buf;
  return r;
}

}  // namespace twobody::cuda
