#pragma once
// TWOBODY_HD marks code that runs on the host and, when compiled by nvcc, on the device: pair
// functions and bin lookup are written once and shared by both backends.
#if defined(__CUDACC__)
#define TWOBODY_HD __host__ __device__ __forceinline__
#else
#define TWOBODY_HD inline
#endif
// Unrolling hints reach the device compiler only (the host pass would warn about them).
#if defined(__CUDA_ARCH__)
#define TWOBODY_UNROLL _Pragma("unroll")
#else
#define TWOBODY_UNROLL
#endif

namespace twobody {
inline constexpr int kMaxDim = 8;
inline constexpr const char* kVersion = "0.1.0";
}  // namespace twobody
