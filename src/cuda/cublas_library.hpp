#pragma once
// cuBLAS opened at run time (cuda/cuda_library.hpp): the functions the GEMM route calls
// (cuda/gemm_matrix.cu), or why they are not there.
#include <cublas_v2.h>

#include <string>

namespace twobody::cuda {

struct CublasApi {
  std::string error;  // "" when every function below is bound
  decltype(&cublasCreate_v2) create = nullptr;
  decltype(&cublasDestroy_v2) destroy = nullptr;
  decltype(&cublasSetMathMode) set_math_mode = nullptr;
  decltype(&cublasSetStream_v2) set_stream = nullptr;
  decltype(&cublasDgemm_v2) dgemm = nullptr;
  decltype(&cublasDsyrk_v2) dsyrk = nullptr;
  decltype(&cublasGetStatusString) status_string = nullptr;
};

// Loaded once (TWOBODY_CUBLAS names the library to try first).
const CublasApi& cublas();

}  // namespace twobody::cuda
