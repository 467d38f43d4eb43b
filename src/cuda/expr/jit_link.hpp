#pragma once
// Run-time kernels for pair expressions: the expression's function (expr/emit_pair_cuda.cpp)
// compiled by NVRTC to LTO-IR and linked by nvJitLink with the expression kernels' LTO-IR
// (expression_kernels.cu, embedded in the library at its build) into one cubin, in which the link
// has inlined the expression into every kernel. Both libraries are loaded with dlopen on first
// use, so the library runs, and runs pair expressions on the CPU, where they are missing; neither
// step needs a GPU (tests compile and link on machines without one).
#include <string>
#include <string_view>

namespace twobody::cuda {

// Whether NVRTC and nvJitLink were found and loaded: `error` empty when they were, else why not;
// `versions` names both (for the plan and the cache key). Looked up once a process: $TWOBODY_NVRTC
// and $TWOBODY_NVJITLINK (full paths) first, then the toolkit the library was built with, then
// the loader's search path.
struct JitToolchain {
  std::string error;
  std::string versions;
  int nvrtc_major = 0, nvjitlink_major = 0;
};
const JitToolchain& jit_toolchain();

// The linked image of `source` for compute capability `arch` (e.g. 90): a cubin, or PTX with
// `ptx` (what a test reads to check that no operation was contracted into an FMA). Error(Backend)
// with the compiler's log when the toolchain is missing or a step fails.
std::string jit_link_expression(const std::string& source, int arch, bool ptx = false);

// Why the embedded kernels do not serve compute capability `arch` (e.g. 90): "" when they were
// built for it.
std::string expression_kernels_unavailable_for(int arch);

// The embedded kernels' LTO-IR (a fatbin) and a hash of it (part of every cache key).
std::string_view expression_kernels_image();
std::string expression_kernels_hash();

}  // namespace twobody::cuda
