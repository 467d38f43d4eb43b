// The GPU matrices' block pipeline (cuda/matrix_blocks.hpp).
#include "twobody/detail/cuda/matrix_blocks.hpp"

#include <vector>

#include "twobody/detail/cuda/cuda_check.hpp"
#include "twobody/detail/cuda/device_buffer.hpp"
#include "twobody/detail/io/matrix_writer.hpp"

namespace twobody::cuda {

namespace {

// Pinned host memory for a block's values (freed with cudaFreeHost).
struct PinnedValues {
  double* p = nullptr;
  explicit PinnedValues(std::size_t n) {
    if (n) TWOBODY_CUDA_CHECK(cudaMallocHost(reinterpret_cast<void**>(&p), n * sizeof(double)));
  }
  ~PinnedValues() {
    if (p) cudaFreeHost(p);
  }
  PinnedValues(const PinnedValues&) = delete;
  PinnedValues& operator=(const PinnedValues&) = delete;
};

}  // namespace

void run_matrix_blocks(std::size_t n_rows, std::size_t n_cols, bool symmetric, std::size_t block, MatrixSink& sink,
                       const std::function<void(double)>* progress, const ComputeBlock& compute) {
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
  std::vector<MatrixBlock> blocks;
  for (std::size_t r0 = 0; r0 < n_rows; r0 += block) {
    const std::size_t c0 = symmetric ? r0 : 0;
    blocks.push_back({r0, std::min(block, n_rows - r0), c0, n_cols - c0});
  }
  double total = 0, finished = 0;
  for (const MatrixBlock& b : blocks) total += static_cast<double>(b.nr) * static_cast<double>(b.ld);
  const auto deliver = [&](std::size_t at) {
    const MatrixBlock& b = blocks[at];
    TWOBODY_CUDA_CHECK(cudaEventSynchronize(done[at % 2]));
    const double* v = host[at % 2];
    sink.put(b.r0, b.nr, b.c0, b.ld, v, b.ld);
    // A × A of a symmetric kernel: the entries right of the block's own square, mirrored below it.
    if (symmetric && b.c0 + b.nr < n_cols) sink.put_mirror(b.r0, b.nr, b.c0 + b.nr, b.ld - b.nr, v + b.nr, b.ld);
    sink.block_done();
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
}

}  // namespace twobody::cuda
