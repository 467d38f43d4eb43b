#pragma once
// The GEMM route of the dot-like matrix kernels, between the engine (engine/matrix_run.cpp) and
// the CUDA backend (cuda/gemm_matrix.cu; cuda/no_cuda.cpp without CUDA).
#include <cstddef>
#include <cstdint>
#include <functional>
#include <string>

#include "twobody/detail/engine/gemm_rows.hpp"

namespace twobody {

class MatrixSink;

// The dot-like named kernels (engine/gemm_rows.hpp) on the device's float64 GEMM (cuBLAS;
// cuda/gemm_matrix.cu): the prepared rows uploaded once, each block of rows one DGEMM and one pass
// that forms the kernel's values and settles, for distances, the entries whose bound the GEMM could
// break (exact/gemm_bounds.hpp). The run gives the device's name, how many entries the float64
// rule settled (of those computed: the half, for A x A) and where the time went.
struct GemmMatrixJob {
  GemmForm form = GemmForm::Dot;
  const GemmRows* a = nullptr;
  const GemmRows* b = nullptr;  // null: A x A
  bool symmetric = false;       // A x A: the half on and above the diagonal, mirrored
  std::size_t block_rows = 0;
  const std::function<void(double)>* progress = nullptr;
};
struct GemmMatrixRun {
  std::string device;
  std::uint64_t settled = 0;
  // Seconds: the rows' upload (and the cuBLAS handle), the block buffers, the host's waits for the
  // device, the sink's puts.
  double upload = 0, setup = 0, device_wait = 0, sink = 0;
};
GemmMatrixRun run_matrix_gemm(const GemmMatrixJob& job, MatrixSink& sink);
// Why this process cannot take the GEMM route ("" when it can: cuBLAS loaded at run time).
std::string gemm_route_unavailable();
// What the current CUDA device has free for a run (0 without CUDA).
std::size_t cuda_free_device_bytes();

}  // namespace twobody
