#include "twobody/detail/engine/memory.hpp"

#include <unistd.h>

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

}  // namespace twobody
