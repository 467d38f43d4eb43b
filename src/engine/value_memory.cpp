// The memory of large results (DefaultInitAllocator, twobody/result.hpp): blocks of 32 MiB and
// more mapped on their own, 2 MiB-aligned, advised to transparent huge pages (a no-op where the
// kernel has them off; MADV_HUGEPAGE matters where they are "madvise", Ubuntu's default).
#include <sys/mman.h>

#include <cstdint>
#include <new>

#include "twobody/result.hpp"

namespace twobody::detail {

namespace {
constexpr std::size_t kLarge = std::size_t{32} << 20;
constexpr std::size_t kHuge = std::size_t{2} << 20;
std::size_t rounded(std::size_t bytes) { return (bytes + kHuge - 1) / kHuge * kHuge; }
}  // namespace

void* allocate_values(std::size_t bytes) {
  if (bytes < kLarge) return ::operator new(bytes);
  const std::size_t len = rounded(bytes);
  void* m = ::mmap(nullptr, len + kHuge, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (m == MAP_FAILED) throw std::bad_alloc();
  const auto base = reinterpret_cast<std::uintptr_t>(m);
  const std::uintptr_t aligned = (base + kHuge - 1) / kHuge * kHuge;
  if (aligned > base) ::munmap(m, aligned - base);
  if (const std::size_t tail = base + len + kHuge - (aligned + len)) ::munmap(reinterpret_cast<void*>(aligned + len), tail);
#ifdef MADV_HUGEPAGE
  ::madvise(reinterpret_cast<void*>(aligned), len, MADV_HUGEPAGE);
#endif
  return reinterpret_cast<void*>(aligned);
}

void free_values(void* p, std::size_t bytes) noexcept {
  if (!p) return;
  if (bytes < kLarge) return ::operator delete(p);
  ::munmap(p, rounded(bytes));
}

}  // namespace twobody::detail
