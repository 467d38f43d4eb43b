#pragma once
// The direct output buffer of pair lists (seed 000 §4.3.3, Algorithm 5), made resumable: the
// arithmetic the kernels and the host share, in plain C++ so that the CPU tests check it
// (tests/pair_pool_test.cpp). The device side is PairListOutput (output/pair_list_output.cuh).
//
// The pool is `pages` pages of `page_size` pairs and one global page pointer. Each warp holds a page
// and fills it; a write that needs more claims all the pages it needs with one atomicAdd on the
// pointer: one atomic per page, not per pair. Writes are warp-wide (every lane calls, a ballot
// orders the lanes), so a unit of work emits its pairs in one fixed order whenever it runs. When
// the pool runs out, a warp writes what still fits and keeps how many of its unit's pairs are
// written; its worker (the block of a brute-force tile, the warp of a grid unit) records the unit
// with those counts and stops. Only the page a warp ends on can be partly filled, and the warp says
// how much of it is unused. The host copies the used pages out without those slots, resets the
// pointer and launches again over the recorded units (each skipping the pairs it wrote) and the
// units no worker reached, until none is left: no pair is lost or written twice, and no counting
// pass is needed.
#include <algorithm>
#include <cstdint>
#include <cstdlib>
#include <string>
#include <optional>
#include <vector>

#include "twobody/config.hpp"
#include "twobody/error.hpp"
#include "twobody/result.hpp"

namespace twobody::cuda {

// One pair in the pool: indices in the traversal's point order, the float64 natural value.
struct alignas(16) PairSlot {
  std::uint32_t i, j;
  double value;
};

constexpr unsigned long long kNoPage = ~0ull;

// A warp's page and how many of its slots are filled.
struct PageCursor {
  unsigned long long page = kNoPage;
  unsigned long long fill = 0;
};

// Slots left in the cursor's page.
TWOBODY_HD unsigned long long page_room(const PageCursor& c, unsigned long long page_size) {
  return c.page == kNoPage ? 0 : page_size - c.fill;
}
// Pages to claim for `m` more pairs beyond the cursor's room.
TWOBODY_HD unsigned long long pages_to_claim(const PageCursor& c, unsigned long long m, unsigned long long page_size) {
  const unsigned long long room = page_room(c, page_size);
  return m > room ? (m - room + page_size - 1) / page_size : 0;
}
// Of `k` pages claimed from `first` on (the page pointer's old value), those the pool has.
TWOBODY_HD unsigned long long pages_granted(unsigned long long first, unsigned long long k, unsigned long long pages) {
  return first >= pages ? 0 : (k < pages - first ? k : pages - first);
}
// The slot of a write's q-th pair: the cursor's `room` slots first, then the granted pages from
// `first` on (consecutive in the pool).
TWOBODY_HD unsigned long long slot_of(const PageCursor& c, unsigned long long room, unsigned long long first,
                                      unsigned long long q, unsigned long long page_size) {
  return q < room ? c.page * page_size + c.fill + q : first * page_size + (q - room);
}
// The cursor after a write of `written` pairs laid out as slot_of says. Every page but the last
// granted one ends full (when the pool ran out the last is full too), so only the page a warp
// ends on can be partly filled.
TWOBODY_HD PageCursor advance(PageCursor c, unsigned long long room, unsigned long long first, unsigned long long granted,
                              unsigned long long written, unsigned long long page_size) {
  if (granted == 0) {
    c.fill += written;  // written <= room
    return c;
  }
  c.page = first + granted - 1;
  c.fill = written - room - (granted - 1) * page_size;
  return c;
}

// The pool and one launch's work as the kernels see them (PairKernelArgs::list). A launch runs
// `resumed` units given explicitly (task_unit, and task_skip: per warp of the unit, the pairs it
// wrote in earlier launches), then the units first_unit, first_unit + 1, ... from their start.
struct PairListBuffer {
  PairSlot* slots = nullptr;  // pages x page_size
  unsigned long long page_size = 0, pages = 0;
  unsigned long long* next_page = nullptr;  // the global page pointer, zero at each launch
  std::uint32_t* page_unused = nullptr;     // per page, slots its last warp left empty; zero at each launch
  const unsigned long long* task_unit = nullptr;
  const unsigned long long* task_skip = nullptr;
  unsigned long long resumed = 0, first_unit = 0;
  int warps = 1;  // warps per unit: kThreads / 32 for a brute-force tile, 1 for a grid unit
  // Units stopped for want of pages (at most one per worker): count, unit, per warp pairs written.
  unsigned long long* stopped = nullptr;
  unsigned long long* stopped_unit = nullptr;
  unsigned long long* stopped_skip = nullptr;
  unsigned long long stopped_capacity = 0;

  TWOBODY_HD unsigned long long unit_of(unsigned long long task) const {
    return task < resumed ? task_unit[task] : first_unit + (task - resumed);
  }
  TWOBODY_HD unsigned long long skip_of(unsigned long long task, int warp) const {
    return task < resumed ? task_skip[task * static_cast<unsigned long long>(warps) + static_cast<unsigned>(warp)] : 0;
  }
};

// The host's side of the launches: the units the next one runs.
class PairListQueue {
 public:
  PairListQueue(unsigned long long units, int warps) : end_(units), warps_(warps) {}

  // Tasks of the next launch: the resumed units, then the units not yet begun.
  unsigned long long tasks() const { return unit_.size() + (end_ - next_); }
  bool done() const { return tasks() == 0; }
  const std::vector<unsigned long long>& resumed_units() const { return unit_; }
  const std::vector<unsigned long long>& resumed_skips() const { return skip_; }  // warps per unit
  unsigned long long first_unit() const { return next_; }
  int warps() const { return warps_; }

  // After a launch whose workers claimed its first `claimed` tasks (the task counter, at most
  // tasks()) and recorded `n` stopped units (unit[k], skip[k * warps + w]). Every other claimed
  // task finished; the tasks no worker claimed are still to run, resumed ones as they were.
  void after_launch(unsigned long long claimed, const unsigned long long* unit, const unsigned long long* skip,
                    std::size_t n) {
    claimed = std::min(claimed, tasks());
    std::vector<unsigned long long> units(unit, unit + n), skips(skip, skip + n * static_cast<std::size_t>(warps_));
    if (claimed < unit_.size()) {
      units.insert(units.end(), unit_.begin() + static_cast<std::ptrdiff_t>(claimed), unit_.end());
      skips.insert(skips.end(), skip_.begin() + static_cast<std::ptrdiff_t>(claimed * static_cast<unsigned>(warps_)),
                   skip_.end());
    } else {
      next_ += claimed - unit_.size();
    }
    unit_ = std::move(units);
    skip_ = std::move(skips);
  }

 private:
  std::vector<unsigned long long> unit_, skip_;
  unsigned long long next_ = 0, end_;
  int warps_;
};

struct PairPoolShape {
  unsigned long long page_size = 0;  // pairs
  unsigned long long pages = 0;
};

// The pool for a run of at most `bound` pairs (the candidate pairs, or max_pairs + 1) on a device
// with `free_bytes` free and at most `warps` warps resident at once. The pool takes at most a
// quarter of the free memory and 2^26 pairs (1 GiB), and no more than the run can fill: `bound`
// plus a page per warp, since only the page a warp ends on is partly filled. Pages of 32 to 4096
// pairs, as large as keeps those partly filled pages under a quarter of the pool. `page_size` and
// `pages` (TuningPolicy's pair_page_size, pair_pool_pages) override them, for tests that force
// many launches with a tiny pool.
inline PairPoolShape pair_pool_shape(std::size_t free_bytes, unsigned long long bound, unsigned long long warps,
                                     std::optional<unsigned long long> page_size = std::nullopt,
                                     std::optional<unsigned long long> pages = std::nullopt) {
  const unsigned long long cap =
      std::max<unsigned long long>(1, std::min<unsigned long long>(free_bytes / 4 / sizeof(PairSlot), 1ull << 26));
  warps = std::max<unsigned long long>(warps, 1);
  PairPoolShape s;
  s.page_size = 32;
  while (s.page_size < 4096 && s.page_size * 2 * 4 * warps <= std::min(cap, bound)) s.page_size *= 2;
  if (page_size) s.page_size = *page_size;
  const unsigned long long want = std::min(cap, std::min(cap, bound) + warps * s.page_size);
  s.pages = std::max<unsigned long long>(1, (want + s.page_size - 1) / s.page_size);
  if (pages) s.pages = *pages;
  return s;
}

// Appends the pairs of pages [0, used) (page p holds page_size - unused[p] pairs from its start)
// in the callers' indices: order_a, order_b (when not null) map the traversal's point order to
// theirs; auto pairs keep i < j.
inline void drain_pages(const PairSlot* slots, const std::uint32_t* unused, unsigned long long used,
                        unsigned long long page_size, const std::uint32_t* order_a, const std::uint32_t* order_b,
                        bool is_auto, std::vector<PairRecord>& out) {
  for (unsigned long long p = 0; p < used; ++p) {
    const PairSlot* page = slots + p * page_size;
    const unsigned long long n = page_size - std::min<unsigned long long>(unused[p], page_size);
    for (unsigned long long k = 0; k < n; ++k) {
      PairRecord r{page[k].i, page[k].j, page[k].value};
      if (order_a) r.i = order_a[r.i];
      if (order_b) r.j = order_b[r.j];
      if (is_auto && r.i > r.j) std::swap(r.i, r.j);
      out.push_back(r);
    }
  }
}

}  // namespace twobody::cuda
