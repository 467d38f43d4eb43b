#pragma once
// The GPU matrices' pipeline, shared by the generated kernels (cuda/expr/expression_runs.cpp) and
// the GEMM route (cuda/gemm_matrix.cu): the matrix in blocks of rows, two in flight: the device
// computes one into a device buffer and copies it to pinned host memory while the host hands the
// other to the sink (and mirrors it, for A × A of a symmetric kernel).
#include <cuda_runtime.h>

#include <cstddef>
#include <functional>

namespace twobody {
class MatrixSink;
}

namespace twobody::cuda {

// Rows [r0, r0 + nr) against columns [c0, c0 + ld): c0 = r0 for A × A of a symmetric kernel (the
// block's columns from its first row), else 0.
struct MatrixBlock {
  std::size_t r0, nr, c0, ld;
};

// `compute` enqueues on `stream` the block's nr × ld row-major values into `out` (a device
// buffer of block_rows × cols doubles).
using ComputeBlock = std::function<void(const MatrixBlock& b, double* out, cudaStream_t stream)>;

// Where a run's wall time went (seconds): the buffers and the stream, the host's waits for the
// device, the sink's puts (copies, mirrors, file writes).
struct MatrixBlocksTimes {
  double setup = 0, device_wait = 0, sink = 0;
};

// The two pinned host buffers of block_rows × cols doubles are kept for the process's next matrix
// (pinning hundreds of megabytes costs tenths of a second: a Python session asking for matrix after
// matrix pays it once), at most 1 GiB of them.
MatrixBlocksTimes run_matrix_blocks(std::size_t rows, std::size_t cols, bool symmetric, std::size_t block_rows,
                                    MatrixSink& sink, const std::function<void(double)>* progress,
                                    const ComputeBlock& compute);

}  // namespace twobody::cuda
