#pragma once
// Compact binning of a lattice map's sources on the device (lattice_device_bins.cu): the host's
// bin_sources (engine/lattice_bins.hpp) and work_items (lattice_tiles.hpp), made where the gather
// reads them. The host's binning of MRI gridding's samples took 0.17 s of a 0.53 s run on an H200
// and sent 88 bytes a source to the device; here the raw columns go up (at most 48 bytes a
// source), a kernel bins them with the host's float64 operations, CUB's radix sort orders them
// stably (each bin's sources in input order, as the host's sort), and the offsets, the Sources and
// the work items are written by kernels: the same bytes as the host's, so the map keeps its bits.
#include <array>
#include <cstddef>
#include <cstdint>
#include <vector>

#include "twobody/detail/cuda/device_buffer.hpp"
#include "twobody/detail/cuda/lattice_tiles.hpp"
#include "twobody/detail/engine/lattice_bins.hpp"
#include "twobody/detail/engine/lattice_plan.hpp"

namespace twobody::cuda {

struct DeviceBins {
  DeviceBuffer<lattice::Source> sources;  // the kept sources, in bin order
  DeviceBuffer<std::uint64_t> start;      // bins + 1 offsets
  std::size_t kept = 0;
};

// Device bytes the binning takes at its peak for the plan's sources in `bins` bins (the columns,
// the sort's keys, values and scratch, the Sources and the offsets); nothing else is counted.
double device_binning_bytes(const LatticePlan& plan, std::uint64_t bins);

// Whether the device can bin these sources (fewer than 2^32 of them, bin numbers below the sort's
// sentinel); the host bins the rest.
bool device_can_bin(const LatticePlan& plan, std::uint64_t bins);

// The plan's sources binned on the current device into `axis`'s bins: the bytes bin_sources makes.
DeviceBins bin_sources_on_device(const LatticePlan& plan, const std::array<lattice::AxisBins, 3>& axis);

// The work items of work_items (lattice_tiles.hpp) for compact bins whose offsets are on the device,
// the tiles' runs of bins (tile_runs) on the device too: the same items in the same order.
DeviceBuffer<WorkItem> work_items_on_device(const std::uint64_t* start, const long long* const (&runs)[3],
                                            const long long (&tiles_per)[3], const long long (&nb)[3], std::uint64_t share,
                                            std::size_t& items);

}  // namespace twobody::cuda
