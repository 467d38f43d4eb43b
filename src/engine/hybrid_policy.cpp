#include "twobody/detail/engine/hybrid_policy.hpp"

#include <fmt/format.h>

#include <cstdlib>
#include <string>

#include "twobody/error.hpp"

namespace twobody {

namespace {

std::size_t whole_number(const char* name, std::size_t max) {
  const char* text = std::getenv(name);
  if (!text) return 0;
  char* end = nullptr;
  const unsigned long long v = std::strtoull(text, &end, 10);
  if (!*text || *end || v == 0 || v > max || text[0] == '-')
    throw Error(ErrorKind::Config, fmt::format("{} must be a whole number from 1 to {}, not '{}'", name, max, text));
  return static_cast<std::size_t>(v);
}

double seconds(const char* name, double fallback) {
  const char* text = std::getenv(name);
  if (!text) return fallback;
  char* end = nullptr;
  const double v = std::strtod(text, &end);
  if (!*text || *end || !(v > 0) || v > 3600)
    throw Error(ErrorKind::Config, fmt::format("{} must be a number of seconds above 0 (at most 3600), not '{}'", name, text));
  return v;
}

}  // namespace

HybridPolicy HybridPolicy::current() {
  HybridPolicy p;
  if (const char* e = std::getenv("TWOBODY_HYBRID_FAKE_GPU")) {
    const std::string v = e;
    if (v != "0" && v != "1") throw Error(ErrorKind::Config, "TWOBODY_HYBRID_FAKE_GPU must be 0 or 1, not '" + v + "'");
    p.fake_gpu = v == "1";
  }
  p.band_rows = whole_number("TWOBODY_HYBRID_BAND_ROWS", std::size_t(1) << 40);
  p.slabs = whole_number("TWOBODY_HYBRID_SLABS", 1 << 16);
  p.gpu_band_seconds = seconds("TWOBODY_HYBRID_GPU_SECONDS", p.gpu_band_seconds);
  p.cpu_band_seconds = seconds("TWOBODY_HYBRID_CPU_SECONDS", p.cpu_band_seconds);
  return p;
}

std::string HybridPolicy::overrides() const {
  const HybridPolicy d;
  std::string s;
  const auto add = [&](const std::string& what) { s += (s.empty() ? "" : ", ") + what; };
  if (fake_gpu) add("TWOBODY_HYBRID_FAKE_GPU=1 (the GPU worker is the cpu backend on one thread)");
  if (band_rows) add(fmt::format("TWOBODY_HYBRID_BAND_ROWS={}", band_rows));
  if (slabs) add(fmt::format("TWOBODY_HYBRID_SLABS={}", slabs));
  if (gpu_band_seconds != d.gpu_band_seconds) add(fmt::format("TWOBODY_HYBRID_GPU_SECONDS={}", gpu_band_seconds));
  if (cpu_band_seconds != d.cpu_band_seconds) add(fmt::format("TWOBODY_HYBRID_CPU_SECONDS={}", cpu_band_seconds));
  return s;
}

}  // namespace twobody
