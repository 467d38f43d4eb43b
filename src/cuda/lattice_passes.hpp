#pragma once
// The GPU lattice traversal's passes (lattice_gather.cu): one set of binned sources on the device
// with the work items that share its tiles out to blocks. Compact bins made on the device
// (lattice_device_bins.hpp) or uploaded from the host's binning, or seed 002's regular bins.
#include <array>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <span>
#include <vector>

#include "twobody/detail/cuda/device_buffer.hpp"
#include "twobody/detail/cuda/lattice_tiles.hpp"
#include "twobody/detail/engine/lattice_bins.hpp"
#include "twobody/detail/engine/lattice_plan.hpp"

namespace twobody::cuda {

// A work item's share of a tile's sources: 16 stagings of a block of kTile³ threads (crowded tiles
// spread over many blocks, a light one is one item).
constexpr std::uint64_t kItemSources = 16 * kTile * kTile * kTile;

struct LatticePass {
  DeviceBuffer<lattice::Source> sources;
  DeviceBuffer<std::uint64_t> start;   // compact bins
  DeviceBuffer<std::uint32_t> count;   // regular bins
  DeviceBuffer<WorkItem> items;
  std::size_t n_items = 0;
  unsigned long long depth = 0;  // regular bins
  bool regular = false;
};

// Compact bins from the host (`sources` in bin order, `start` their offsets), the items from the
// host's tile runs `runs`; `tiles_per` and `nb` the tiles and bins per axis.
std::unique_ptr<LatticePass> compact_pass(std::span<const lattice::Source> sources, std::span<const std::uint64_t> start,
                                          const std::vector<long long> (&runs)[3], const long long (&tiles_per)[3],
                                          const long long (&nb)[3]);

// Compact bins made on the device, their items too (`runs` on the device).
std::unique_ptr<LatticePass> device_pass(const LatticePlan& plan, const std::array<lattice::AxisBins, 3>& axis,
                                         const long long* const (&runs)[3], const long long (&tiles_per)[3],
                                         const long long (&nb)[3]);

// Seed 002's regular bins (padded slots and counts).
std::unique_ptr<LatticePass> regular_pass(const RegularBins& r, const std::vector<long long> (&runs)[3],
                                          const long long (&tiles_per)[3], const long long (&nb)[3]);

// Whether this run bins on the device: compact bins that the device can sort, within `room` bytes
// (TWOBODY_LATTICE_BINNING=host keeps the host's binning, for comparison).
bool bins_on_device(const LatticePlan& plan, const std::array<lattice::AxisBins, 3>& axis, double room);

}  // namespace twobody::cuda
