#pragma once
// The direct output buffer of pair lists on the device (pair_pool.hpp): the pool, its counters and
// a launch's resumed units.
#include <algorithm>
#include <vector>

#include "twobody/detail/cuda/cuda_check.hpp"
#include "twobody/detail/cuda/device_buffer.hpp"
#include "twobody/detail/cuda/pair_pool.hpp"
#include "twobody/error.hpp"

namespace twobody::cuda {

// The direct output buffer of pair lists on the device (pair_pool.hpp): the pool, its counters and
// a launch's resumed units. prepare() readies it for a launch over the queue's tasks; drain() moves
// the filled pages out after it and tells the queue which units still have pairs to write.
struct DevicePairPool {
  PairPoolShape shape;
  unsigned long long workers;  // warps resident at once, at most: each records at most one stopped unit
  int warps;                   // per unit
  DeviceBuffer<PairSlot> slots;
  DeviceBuffer<std::uint32_t> unused;
  DeviceBuffer<unsigned long long> counters;  // the page pointer, stopped units
  DeviceBuffer<unsigned long long> task_unit, task_skip, stopped_unit, stopped_skip;

  DevicePairPool(PairPoolShape s, unsigned long long max_workers, int unit_warps)
      : shape(s), workers(max_workers), warps(unit_warps), slots(s.pages * s.page_size), unused(s.pages), counters(2),
        task_unit(max_workers), task_skip(max_workers * unit_warps), stopped_unit(max_workers),
        stopped_skip(max_workers * unit_warps) {}

  // The buffer for a launch over q's tasks; its counters zeroed (on the legacy stream).
  PairListBuffer prepare(const PairListQueue& q) {
    // A launch's resumed units were stopped by the workers of the one before (or left unclaimed).
    if (q.resumed_units().size() > workers)
      throw Error(ErrorKind::Internal, "pair list: more units to resume than workers can have stopped");
    task_unit.upload(q.resumed_units());
    task_skip.upload(q.resumed_skips());
    unused.zero();
    counters.zero();
    PairListBuffer b;
    b.slots = slots.get();
    b.page_size = shape.page_size;
    b.pages = shape.pages;
    b.next_page = counters.get();
    b.page_unused = unused.get();
    b.task_unit = task_unit.get();
    b.task_skip = task_skip.get();
    b.resumed = q.resumed_units().size();
    b.first_unit = q.first_unit();
    b.warps = warps;
    b.stopped = counters.get() + 1;
    b.stopped_unit = stopped_unit.get();
    b.stopped_skip = stopped_skip.get();
    b.stopped_capacity = workers;
    return b;
  }

  // After a launch whose workers claimed `claimed` tasks: the used pages' pairs, in the callers'
  // indices (drain_pages), to take(batch) in batches of about 2^22, and the queue moved on.
  template <class Take>
  void drain(PairListQueue& q, unsigned long long claimed, const std::uint32_t* order_a, const std::uint32_t* order_b,
             bool is_auto, Take&& take) {
    unsigned long long c[2];
    counters.download(c, 2);
    const unsigned long long used = std::min(c[0], shape.pages), n_stopped = c[1];
    if (n_stopped > workers) throw Error(ErrorKind::Internal, "pair list: more units stopped than workers ran");
    std::vector<std::uint32_t> h_unused(used);
    unused.download(h_unused.data(), used);
    const unsigned long long chunk = std::max<unsigned long long>(1, (1ull << 22) / shape.page_size);
    std::vector<PairSlot> h_slots;
    std::vector<PairRecord> batch;
    for (unsigned long long p0 = 0; p0 < used; p0 += chunk) {
      const unsigned long long n = std::min(chunk, used - p0);
      h_slots.resize(n * shape.page_size);
      TWOBODY_CUDA_CHECK(cudaMemcpy(h_slots.data(), slots.get() + p0 * shape.page_size,
                                    n * shape.page_size * sizeof(PairSlot), cudaMemcpyDeviceToHost));
      batch.clear();
      drain_pages(h_slots.data(), h_unused.data() + p0, n, shape.page_size, order_a, order_b, is_auto, batch);
      if (!batch.empty()) take(batch);
    }
    std::vector<unsigned long long> units(n_stopped), skips(n_stopped * static_cast<unsigned>(warps));
    stopped_unit.download(units.data(), units.size());
    stopped_skip.download(skips.data(), skips.size());
    q.after_launch(claimed, units.data(), skips.data(), units.size());
  }
};

}  // namespace twobody::cuda
