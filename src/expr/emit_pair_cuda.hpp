#pragma once
// The CUDA source of a pair expression's device functions (pair_abi.hpp's tb_load_a, tb_load_b,
// tb_pair_loaded and tb_pair_tile), which NVRTC compiles at run time to LTO-IR and nvJitLink
// links into the kernels of cuda/expression_kernels.cu.
// The program is the CPU evaluator's (emit_rows.cpp) for one pair: pair scalars first, then the
// loop over k = 0 … d−1 in stored order with the Vector nodes and the reductions' steps, then the
// scalars that read a reduction; every operation the text of ops.hpp's (emit_common.hpp), so with
// no contraction into FMA (NVRTC's --fmad=false, nvJitLink's -fma=0) a pair's value on the GPU has
// the CPU's bits.
#include <string>

#include "twobody/detail/expr/compiled.hpp"

namespace twobody::expr {

// The whole translation unit: no #include (NVRTC compiles it alone), the ABI struct, the helpers,
// the declarations of tb_exp, tb_log and tb_pow (the kernel library's twobody::portable), and
// the four functions. Literals exact (hexadecimal floats), parameters read from TbPairArgs::value, so a new
// parameter value reuses the kernel. Deterministic: equal expressions give equal text.
std::string emit_pair_cuda_source(const Compiled& c);

// Whether the source's tb_pair_tile runs the loop over the dimension once for all the tile's pairs
// (seed 001's register tile), or evaluates them one after another: an expression with no loop, or
// whose accumulators and scalars would not fit in registers.
bool pair_tile_shares_the_loop(const Compiled& c);

}  // namespace twobody::expr
