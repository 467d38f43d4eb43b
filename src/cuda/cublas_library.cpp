// cuBLAS opened at run time (cuda/cublas_library.hpp).
#include "twobody/detail/cuda/cublas_library.hpp"

#include <dlfcn.h>
#include <fmt/format.h>

#include "twobody/detail/cuda/cuda_library.hpp"

namespace twobody::cuda {

namespace {

template <class F>
void bind(void* lib, const char* name, F& f, std::string& missing) {
  f = reinterpret_cast<F>(dlsym(lib, name));
  if (!f) missing += fmt::format(" {}", name);
}

}  // namespace

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
    bind(lib, "cublasCreate_v2", a.create, missing);
    bind(lib, "cublasDestroy_v2", a.destroy, missing);
    bind(lib, "cublasSetMathMode", a.set_math_mode, missing);
    bind(lib, "cublasSetStream_v2", a.set_stream, missing);
    bind(lib, "cublasDgemm_v2", a.dgemm, missing);
    bind(lib, "cublasDsyrk_v2", a.dsyrk, missing);
    bind(lib, "cublasGetStatusString", a.status_string, missing);
    if (!missing.empty()) a.error = "cuBLAS lacks" + missing;
    return a;
  }();
  return api;
}

}  // namespace twobody::cuda
