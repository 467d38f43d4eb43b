#pragma once
// The ABI between the GPU kernels of pair expressions (cuda/expression_kernels.cu, built into
// LTO-IR with the library) and the expression's own function (emit_pair_cuda.cpp, compiled at run
// time by NVRTC), which nvJitLink links and optimises into one cubin:
//   extern "C" __device__ double tb_pair(const TbPairArgs* args, unsigned long long i, unsigned long long j);
// the value of pair (i, j), exactly what ExpressionRows::row gives for it, from the per-point
// columns the host's prepass computed (ExpressionRows::column, uploaded) and the constants
// (ExpressionRows::value). The fields are written once, here, and pasted as text into the source.
#define TWOBODY_PAIR_ARGS_FIELDS                                                                    \
  const double* const* column; /* node -> its per-point column (k-major for a Vector), or a      \
                                  parameter vector's d values */                                  \
  const double* value;         /* node -> its value (parameters and what they alone compute) */   \
  unsigned long long na, nb, d; /* set sizes, dimension */

namespace twobody::expr {

struct TbPairArgs {
  TWOBODY_PAIR_ARGS_FIELDS
};

// Raised when the struct, the function's meaning or the kernels' names change: part of every
// cache key of a linked kernel.
inline constexpr int kPairAbi = 1;

}  // namespace twobody::expr
