#include "twobody/detail/engine/auto_choice.hpp"

#include <mutex>

namespace twobody {

namespace {
std::mutex& account_lock() {
  static std::mutex m;
  return m;
}
}  // namespace

CpuRental& CpuRental::process() {
  static CpuRental account;
  return account;
}

bool CpuRental::rent(double estimate) {
  const std::lock_guard lock(account_lock());
  if (!rents_the_cpu(spent_, estimate)) return false;
  spent_ += estimate;
  return true;
}

bool CpuRental::would_rent(double estimate) const {
  const std::lock_guard lock(account_lock());
  return rents_the_cpu(spent_, estimate);
}

void CpuRental::settle(double estimate, double seconds) {
  const std::lock_guard lock(account_lock());
  spent_ += seconds - estimate;
}

double CpuRental::spent() const {
  const std::lock_guard lock(account_lock());
  return spent_;
}

}  // namespace twobody
