#include "twobody/detail/engine/auto_choice.hpp"

#include <fmt/format.h>

#include "twobody/detail/engine/backend.hpp"

namespace twobody {

CpuRental& CpuRental::process() {
  static CpuRental account;
  return account;
}

bool CpuRental::rent(double estimate) {
  const std::lock_guard lock(m_);
  if (!rents_the_cpu(spent_, estimate)) return false;
  spent_ += estimate;
  return true;
}

bool CpuRental::would_rent(double estimate) const {
  const std::lock_guard lock(m_);
  return rents_the_cpu(spent_, estimate);
}

void CpuRental::settle(double estimate, double seconds) {
  const std::lock_guard lock(m_);
  spent_ += seconds - estimate;
}

double CpuRental::spent() const {
  const std::lock_guard lock(m_);
  return spent_;
}

std::string weigh_generated_gpu(double seconds, double count, const char* units, bool& gpu) {
  gpu = false;
  const std::string estimate = fmt::format("the cpu's estimate about {:.2g} s for {:.3g} {}", seconds, count, units);
  if (seconds <= kGeneratedGpuWorthSeconds)
    return fmt::format("; auto: the cpu ({}, within the {} s a GPU's start-up and its kernel's generation take, about twice "
                       "over; --backend cuda runs the generated GPU kernel)",
                       estimate, kGeneratedGpuWorthSeconds);
  if (const std::string why = expression_gpu_unavailable(); !why.empty())
    return fmt::format("; auto: the cpu ({}; no GPU for generated kernels: {})", estimate, why);
  gpu = true;
  return fmt::format("; auto: the GPU ({}, over {} s)", estimate, kGeneratedGpuWorthSeconds);
}

}  // namespace twobody
