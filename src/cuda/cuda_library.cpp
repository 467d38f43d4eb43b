// Opening CUDA's shared libraries at run time (cuda/cuda_library.hpp).
#include "twobody/detail/cuda/cuda_library.hpp"

#include <dlfcn.h>
#include <fmt/format.h>

#include <cstdlib>

namespace twobody::cuda {

std::vector<std::string> library_candidates(const std::string& stem, const std::string& dir, int major) {
  std::vector<std::string> v;
  for (const std::string& suffix : {fmt::format(".so.{}", major), std::string(".so")}) {
    if (!dir.empty()) v.push_back(dir + "/" + stem + suffix);
    v.push_back(stem + suffix);
  }
  return v;
}

void* open_first_library(const char* env, const std::vector<std::string>& names, std::string& tried) {
  std::vector<std::string> all;
  if (const char* v = std::getenv(env); v && *v) all.emplace_back(v);
  all.insert(all.end(), names.begin(), names.end());
  for (const std::string& n : all) {
    if (void* h = dlopen(n.c_str(), RTLD_NOW | RTLD_LOCAL)) return h;
    const char* e = dlerror();
    tried += fmt::format("\n  {}: {}", n, e ? e : "not found");
  }
  return nullptr;
}

void* library_symbol(void* lib, const char* name, std::string& missing) {
  void* f = dlsym(lib, name);
  if (!f) missing += fmt::format(" {}", name);
  return f;
}

}  // namespace twobody::cuda
