#pragma once
// Every CUDA call and launch is checked; a failure becomes Error(Backend) naming the call.
// (No fmt here: fmt 9's compile-time format strings do not survive nvcc's host pass.)
#include <cuda_runtime.h>
#include <string>

#include "twobody/error.hpp"

namespace twobody::cuda {

inline void check(cudaError_t e, const char* call, const char* file, int line) {
  if (e != cudaSuccess)
    throw Error(e == cudaErrorMemoryAllocation ? ErrorKind::Resource : ErrorKind::Backend,
                std::string("CUDA error in ") + call + " (" + file + ":" + std::to_string(line) +
                    "): " + cudaGetErrorString(e));
}

}  // namespace twobody::cuda

#define TWOBODY_CUDA_CHECK(call) ::twobody::cuda::check((call), #call, __FILE__, __LINE__)
#define TWOBODY_CUDA_CHECK_LAUNCH(name) ::twobody::cuda::check(cudaGetLastError(), name, __FILE__, __LINE__)
