// The GPU matrices' block pipeline (cuda/matrix_blocks.hpp).
#include "twobody/detail/cuda/matrix_blocks.hpp"

#include <chrono>
#include <cstdlib>
#include <map>
#include <mutex>
#include <utility>
#include <vector>

#include "twobody/detail/cuda/cuda_check.hpp"
#include "twobody/detail/cuda/device_buffer.hpp"
#include "twobody/detail/io/matrix_writer.hpp"

namespace twobody::cuda {

namespace {

// Pinned host buffers kept between runs (matrix_blocks.hpp): taken whole, given back whole.
class PinnedCache {
 public:
  static PinnedCache& get() {
    // Freed at exit by a handler registered after the CUDA runtime's own (first made by a run, after
    // its first CUDA call), so it runs before the runtime's teardown: nothing kept looks leaked.
    static PinnedCache* c = [] {
      auto* made = new PinnedCache;
      std::atexit([] { get().release(); });
      return made;
    }();
    return *c;
  }
  void release() {
    std::lock_guard<std::mutex> lock(m_);
    for (const auto& f : free_) cudaFreeHost(f.second);
    free_.clear();
    sizes_.clear();
    held_ = 0;
  }
  double* take(std::size_t n) {
    {
      std::lock_guard<std::mutex> lock(m_);
      for (std::size_t k = 0; k < free_.size(); ++k)
        if (free_[k].first >= n) {
          double* p = free_[k].second;
          held_ -= free_[k].first;
          free_.erase(free_.begin() + static_cast<std::ptrdiff_t>(k));
          return p;
        }
    }
    double* p = nullptr;
    TWOBODY_CUDA_CHECK(cudaMallocHost(reinterpret_cast<void**>(&p), n * sizeof(double)));
    std::lock_guard<std::mutex> lock(m_);
    sizes_[p] = n;
    return p;
  }
  void give(double* p) noexcept {
    std::lock_guard<std::mutex> lock(m_);
    const auto at = sizes_.find(p);
    if (at == sizes_.end()) {  // (released at exit meanwhile)
      cudaFreeHost(p);
      return;
    }
    const std::size_t n = at->second;
    free_.push_back({n, p});
    held_ += n;
    // (beyond 1 GiB kept, the oldest are freed)
    while (held_ * sizeof(double) > (std::size_t{1} << 30) && !free_.empty()) {
      held_ -= free_.front().first;
      sizes_.erase(free_.front().second);
      cudaFreeHost(free_.front().second);
      free_.erase(free_.begin());
    }
  }

 private:
  std::mutex m_;
  std::vector<std::pair<std::size_t, double*>> free_;
  std::map<double*, std::size_t> sizes_;
  std::size_t held_ = 0;
};

struct PinnedValues {
  double* p = nullptr;
  explicit PinnedValues(std::size_t n) {
    if (n) p = PinnedCache::get().take(n);
  }
  ~PinnedValues() {
    if (p) PinnedCache::get().give(p);
  }
  PinnedValues(const PinnedValues&) = delete;
  PinnedValues& operator=(const PinnedValues&) = delete;
};

double since(std::chrono::steady_clock::time_point t) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t).count();
}

}  // namespace

MatrixBlocksTimes run_matrix_blocks(std::size_t n_rows, std::size_t n_cols, bool symmetric, std::size_t block,
                                    MatrixSink& sink, const std::function<void(double)>* progress,
                                    const ComputeBlock& compute) {
  MatrixBlocksTimes times;
  auto t = std::chrono::steady_clock::now();
  DeviceBuffer<double> device[2] = {DeviceBuffer<double>(block * n_cols), DeviceBuffer<double>(block * n_cols)};
  PinnedValues host0(block * n_cols), host1(block * n_cols);
  double* host[2] = {host0.p, host1.p};
  cudaStream_t stream = nullptr;
  cudaEvent_t done[2] = {nullptr, nullptr};
  // A blocking stream: ordered after the legacy stream's uploads and allocations (DeviceBuffer).
  TWOBODY_CUDA_CHECK(cudaStreamCreate(&stream));
  struct Release {
    cudaStream_t& s;
    cudaEvent_t* e;
    ~Release() {
      if (s) cudaStreamSynchronize(s), cudaStreamDestroy(s);
      for (int k = 0; k < 2; ++k)
        if (e[k]) cudaEventDestroy(e[k]);
    }
  } release{stream, done};
  for (cudaEvent_t& e : done) TWOBODY_CUDA_CHECK(cudaEventCreateWithFlags(&e, cudaEventDisableTiming));
  times.setup = since(t);
  std::vector<MatrixBlock> blocks;
  for (std::size_t r0 = 0; r0 < n_rows; r0 += block) {
    const std::size_t c0 = symmetric ? r0 : 0;
    blocks.push_back({r0, std::min(block, n_rows - r0), c0, n_cols - c0});
  }
  double total = 0, finished = 0;
  for (const MatrixBlock& b : blocks) total += static_cast<double>(b.nr) * static_cast<double>(b.ld);
  const auto deliver = [&](std::size_t at) {
    const MatrixBlock& b = blocks[at];
    t = std::chrono::steady_clock::now();
    TWOBODY_CUDA_CHECK(cudaEventSynchronize(done[at % 2]));
    times.device_wait += since(t);
    t = std::chrono::steady_clock::now();
    const double* v = host[at % 2];
    sink.put_block(b.r0, b.nr, b.c0, v, b.ld, symmetric);
    times.sink += since(t);
    finished += static_cast<double>(b.nr) * static_cast<double>(b.ld);
    if (progress && *progress && total > 0) (*progress)(finished / total);
  };
  for (std::size_t at = 0; at < blocks.size(); ++at) {
    const MatrixBlock& b = blocks[at];
    double* out = device[at % 2].get();
    compute(b, out, stream);
    TWOBODY_CUDA_CHECK(cudaMemcpyAsync(host[at % 2], out, b.nr * b.ld * sizeof(double), cudaMemcpyDeviceToHost, stream));
    TWOBODY_CUDA_CHECK(cudaEventRecord(done[at % 2], stream));
    if (at > 0) deliver(at - 1);
  }
  deliver(blocks.size() - 1);
  return times;
}

}  // namespace twobody::cuda
