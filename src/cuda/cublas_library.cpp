// cuBLAS opened at run time (cuda/cublas_library.hpp).
#include "twobody/detail/cuda/cublas_library.hpp"

#include <fmt/format.h>

#include "twobody/detail/cuda/cuda_library.hpp"

namespace twobody::cuda {

const CublasApi& cublas() {
  static const CublasApi api = [] {
    CublasApi a;
    std::string tried;
    void* lib = open_first_library("TWOBODY_CUBLAS", library_candidates("libcublas", TWOBODY_CUDA_LIBRARY_DIR, TWOBODY_CUDA_MAJOR),
                                   tried);
    if (!lib) {
      a.error = fmt::format("cuBLAS (the GEMM route's float64 GEMM) was not found; tried:{}", tried);
      return a;
    }
    std::string missing;
    bind_symbol(lib, "cublasCreate_v2", a.create, missing);
    bind_symbol(lib, "cublasDestroy_v2", a.destroy, missing);
    bind_symbol(lib, "cublasSetMathMode", a.set_math_mode, missing);
    bind_symbol(lib, "cublasSetStream_v2", a.set_stream, missing);
    bind_symbol(lib, "cublasDgemm_v2", a.dgemm, missing);
    bind_symbol(lib, "cublasDsyrk_v2", a.dsyrk, missing);
    bind_symbol(lib, "cublasGetStatusString", a.status_string, missing);
    if (!missing.empty()) a.error = "cuBLAS lacks" + missing;
    return a;
  }();
  return api;
}

}  // namespace twobody::cuda
