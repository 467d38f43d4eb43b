#include "twobody/detail/engine/auto_choice.hpp"

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

}  // namespace twobody
