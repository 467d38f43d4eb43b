// The GPU lattice traversal's passes: lattice_passes.hpp.
#include "twobody/detail/cuda/lattice_passes.hpp"

#include <cstdlib>
#include <cstring>

#include "twobody/detail/cuda/lattice_device_bins.hpp"

namespace twobody::cuda {

std::unique_ptr<LatticePass> compact_pass(std::span<const lattice::Source> sources, std::span<const std::uint64_t> start,
                                          const std::vector<long long> (&runs)[3], const long long (&tiles_per)[3],
                                          const long long (&nb)[3]) {
  auto p = std::make_unique<LatticePass>();
  const std::vector<WorkItem> items = work_items(runs, tiles_per, nb, kItemSources, [&](long long row, long long x0, long long x1) {
    return start[static_cast<std::size_t>(row + x1 + 1)] - start[static_cast<std::size_t>(row + x0)];
  });
  p->sources = DeviceBuffer<lattice::Source>(sources.size());
  p->sources.upload(sources.data(), sources.size());
  p->start = DeviceBuffer<std::uint64_t>(start.size());
  p->start.upload(start.data(), start.size());
  p->items = DeviceBuffer<WorkItem>(items);
  p->n_items = items.size();
  return p;
}

std::unique_ptr<LatticePass> device_pass(const LatticePlan& plan, const std::array<lattice::AxisBins, 3>& axis,
                                         const long long* const (&runs)[3], const long long (&tiles_per)[3],
                                         const long long (&nb)[3]) {
  auto p = std::make_unique<LatticePass>();
  DeviceBins bins = bin_sources_on_device(plan, axis);
  p->items = work_items_on_device(bins.start.get(), runs, tiles_per, nb, kItemSources, p->n_items);
  p->sources = std::move(bins.sources);
  p->start = std::move(bins.start);
  return p;
}

std::unique_ptr<LatticePass> regular_pass(const RegularBins& r, const std::vector<long long> (&runs)[3],
                                          const long long (&tiles_per)[3], const long long (&nb)[3]) {
  auto p = std::make_unique<LatticePass>();
  const std::vector<WorkItem> items = work_items(runs, tiles_per, nb, kItemSources, [&](long long row, long long x0, long long x1) {
    std::uint64_t n = 0;
    for (long long b = row + x0; b <= row + x1; ++b) n += r.count[static_cast<std::size_t>(b)];
    return n;
  });
  p->sources = DeviceBuffer<lattice::Source>(r.slots);
  p->count = DeviceBuffer<std::uint32_t>(r.count);
  p->items = DeviceBuffer<WorkItem>(items);
  p->n_items = items.size();
  p->depth = r.depth;
  p->regular = true;
  return p;
}

bool bins_on_device(const LatticePlan& plan, const std::array<lattice::AxisBins, 3>& axis, double room) {
  if (plan.stat->binning == LatticeBinning::Regular) return false;
  if (const char* v = std::getenv("TWOBODY_LATTICE_BINNING"); v && std::strcmp(v, "host") == 0) return false;
  const std::uint64_t bins = static_cast<std::uint64_t>(axis[0].nb * axis[1].nb * axis[2].nb);
  return device_can_bin(plan, bins) && device_binning_bytes(plan, bins) <= room;
}

}  // namespace twobody::cuda
