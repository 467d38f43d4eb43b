// Built when CUDA is off at configure time: the engine then offers the CPU backend only.
#include "twobody/detail/engine/backend.hpp"
#include "twobody/detail/engine/device_start_up.hpp"
#include "twobody/detail/engine/gemm_matrix_run.hpp"
#include "twobody/error.hpp"

namespace twobody {
std::unique_ptr<Backend> make_cuda_backend(int) { return nullptr; }
void start_up_cuda_device() {}
bool device_start_up_ahead() { return false; }
int cuda_device_count() { return 0; }
std::string cuda_unavailable_reason() { return "this build has no CUDA support (configured with TWOBODY_CUDA=OFF or without nvcc)"; }
void use_cuda_device(int) {}
int current_cuda_device() { return -1; }
void set_current_cuda_device(int) {}
std::string expression_gpu_unavailable() { return cuda_unavailable_reason(); }
std::string expression_gpu_kernel(const expr::Compiled&) { return {}; }
Result run_expression_gpu(const cpu::ExpressionPlan&) { throw Error(ErrorKind::Backend, cuda_unavailable_reason()); }
std::string run_matrix_gpu(const cpu::MatrixJob&, MatrixSink&) { throw Error(ErrorKind::Backend, cuda_unavailable_reason()); }
std::size_t matrix_gpu_block_rows(std::size_t rows, std::size_t) { return rows; }
GemmMatrixRun run_matrix_gemm(const GemmMatrixJob&, MatrixSink&) { throw Error(ErrorKind::Backend, cuda_unavailable_reason()); }
std::size_t cuda_free_device_bytes() { return 0; }
std::string gemm_route_unavailable() { return cuda_unavailable_reason(); }
}  // namespace twobody
