#pragma once
// CUDA's shared libraries opened at run time (dlopen) rather than linked: twobody (the CLI, the
// Python module) loads and runs on the CPU where they are absent, and says why a GPU path is not
// available. NVRTC and nvJitLink (cuda/expr/jit_link.cpp), cuBLAS (cuda/cublas_library.cpp).
#include <string>
#include <vector>

namespace twobody::cuda {

// The build's own toolkit first (dir), its major version before any other, then the loader's path:
// dir/stem.so.MAJOR, stem.so.MAJOR, dir/stem.so, stem.so.
std::vector<std::string> library_candidates(const std::string& stem, const std::string& dir, int major);

// The first of `names` that loads (the environment variable `env`'s path first, when set); null
// when none does, with each name's error appended to `tried`.
void* open_first_library(const char* env, const std::vector<std::string>& names, std::string& tried);

// `name` from `lib` (null when absent, with " name" appended to `missing`).
void* library_symbol(void* lib, const char* name, std::string& missing);

// f = `name` from `lib`, as F (a function pointer: `decltype(&theFunction)`).
template <class F>
void bind_symbol(void* lib, const char* name, F& f, std::string& missing) {
  f = reinterpret_cast<F>(library_symbol(lib, name, missing));
}

}  // namespace twobody::cuda
