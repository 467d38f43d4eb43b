#include "twobody/detail/engine/devices.hpp"

#include <fmt/format.h>

#include <cstdlib>
#include <numeric>

#include "twobody/error.hpp"

namespace twobody {

int simulated_devices() {
  const char* v = std::getenv("TWOBODY_SIMULATED_DEVICES");
  if (!v || !*v) return 0;
  char* end = nullptr;
  const long n = std::strtol(v, &end, 10);
  if (*end != '\0' || n < 1 || n > 64)
    throw_config(fmt::format("TWOBODY_SIMULATED_DEVICES={}: expected a number of simulated devices from 1 to 64", v));
  return static_cast<int>(n);
}

int device_count() {
  const int simulated = simulated_devices();
  return simulated > 0 ? simulated : cuda_device_count();
}

void check_devices(const RunOptions& opt) {
  if (opt.devices.empty()) return;
  const int simulated = simulated_devices();
  if (opt.backend == "cpu" && simulated == 0)
    throw_config("devices name CUDA devices, but the backend is cpu: give backend auto or cuda, or no devices");
  const int n = simulated > 0 ? simulated : cuda_device_count();
  for (const int d : opt.devices) {
    if (d >= 0 && d < n) continue;
    if (n == 0)
      throw_config(fmt::format("device {} is not visible: this process sees no CUDA device ({})", d,
                               cuda_unavailable_reason()));
    throw_config(fmt::format("device {} is not visible: this process sees {} {}device{} (0 to {})", d, n,
                             simulated > 0 ? "simulated " : "", n == 1 ? "" : "s", n - 1));
  }
}

std::unique_ptr<Backend> select_backend(const std::string& name, int device) {
  if (name != "cpu" && name != "cuda" && name != "auto")
    throw_config(fmt::format("unknown backend '{}' (auto, cpu, cuda or hybrid)", name));
  if (device >= 0 && simulated_devices() > 0) return make_cpu_backend();
  if (name == "cpu") return make_cpu_backend();
  if (name == "cuda") {
    auto b = make_cuda_backend(device);
    if (!b) throw Error(ErrorKind::Backend, "the cuda backend was requested but " + cuda_unavailable_reason());
    return b;
  }
  if (auto b = make_cuda_backend(device)) return b;
  return make_cpu_backend();
}

std::vector<int> visible_devices() {
  std::vector<int> all(static_cast<std::size_t>(device_count()));
  std::iota(all.begin(), all.end(), 0);
  return all;
}

}  // namespace twobody
