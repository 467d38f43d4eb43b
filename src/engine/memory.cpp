#include "twobody/detail/engine/memory.hpp"

#include <sys/resource.h>
#include <unistd.h>

#include <fstream>

#include <fmt/format.h>

#include "twobody/error.hpp"

namespace twobody {

double physical_memory_bytes() {
  return static_cast<double>(sysconf(_SC_PHYS_PAGES)) * static_cast<double>(sysconf(_SC_PAGE_SIZE));
}

void require_memory(double bytes, const std::string& what) {
  const double have = physical_memory_bytes();
  if (bytes > 0.8 * have)
    throw Error(ErrorKind::Resource, fmt::format("{} needs {:.1f} GiB, more than this machine's memory ({:.1f} GiB)",
                                                 what, bytes / (1 << 30), have / (1 << 30)));
}

double peak_resident_bytes() {
  rusage u{};
  if (getrusage(RUSAGE_SELF, &u) != 0) return 0;
#if defined(__APPLE__)
  return static_cast<double>(u.ru_maxrss);  // bytes there
#else
  return static_cast<double>(u.ru_maxrss) * 1024.0;  // kilobytes on Linux
#endif
}

double current_resident_bytes() {
  std::ifstream statm("/proc/self/statm");
  double pages = 0, resident = 0;
  if (!(statm >> pages >> resident)) return 0;
  return resident * static_cast<double>(sysconf(_SC_PAGE_SIZE));
}

}  // namespace twobody
