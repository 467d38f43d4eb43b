#pragma once
// The host's side of the GPU's lattice gather (lattice_gather.cu): each tile's runs of nearby bins,
// the work items that cut the tiles' sources into blocks' shares, and seed 002's regular bins.
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "twobody/detail/engine/lattice_bins.hpp"
#include "twobody/detail/engine/lattice_plan.hpp"
#include "twobody/detail/engine/lattice_screen.hpp"

namespace twobody::cuda {

constexpr int kTile = lattice::kTileNodes;  // nodes a tile along each axis, as the CPU's
constexpr int kMaxRuns = 2;                 // runs of bins near a tile along one axis (a periodic axis wraps once)

// A tile and a range [first, end) of the sources near it, numbered in the order its rows are visited.
struct WorkItem {
  unsigned long long tile, first, end;
};

// Per axis and tile index, the runs of bins near the tile (AxisBins::runs_near), padded to kMaxRuns.
std::vector<long long> tile_runs(const lattice::AxisBins& axis, long long shape, long long tiles);

// The work items: every tile with sources near it, cut into ranges of at most `share` of them;
// row_sources(row, x0, x1) counts the sources of bins x0..x1 of a row, as the kernel reads them.
template <class RowSources>
std::vector<WorkItem> work_items(const std::vector<long long> (&runs)[3], const long long (&tiles_per)[3],
                                 const long long (&nb)[3], std::uint64_t share, RowSources row_sources) {
  std::vector<WorkItem> items;
  const long long tiles = tiles_per[0] * tiles_per[1] * tiles_per[2];
  for (long long tile = 0; tile < tiles; ++tile) {
    const long long t[3] = {tile % tiles_per[0], tile / tiles_per[0] % tiles_per[1], tile / (tiles_per[0] * tiles_per[1])};
    const long long* rz = runs[2].data() + t[2] * kMaxRuns * 2;
    const long long* ry = runs[1].data() + t[1] * kMaxRuns * 2;
    const long long* rx = runs[0].data() + t[0] * kMaxRuns * 2;
    std::uint64_t n = 0;
    for (int a = 0; a < kMaxRuns && rz[2 * a] >= 0; ++a)
      for (long long bz = rz[2 * a]; bz <= rz[2 * a + 1]; ++bz)
        for (int b = 0; b < kMaxRuns && ry[2 * b] >= 0; ++b)
          for (long long by = ry[2 * b]; by <= ry[2 * b + 1]; ++by)
            for (int c = 0; c < kMaxRuns && rx[2 * c] >= 0; ++c) n += row_sources(nb[0] * (by + nb[1] * bz), rx[2 * c], rx[2 * c + 1]);
    for (std::uint64_t first = 0; first < n; first += share)
      items.push_back(WorkItem{static_cast<unsigned long long>(tile), first, std::min(n, first + share)});
  }
  return items;
}

// How a block visits its tile's sources (lattice_gather.cu). Gather: a thread a node, each running
// over every staged source. Scatter (cuFINUFFT's subproblems, with integer atomics): a thread a
// staged source, each running over the tile's nodes within its stencil (`stencil[k]` spacings
// either side of its position: beyond it the float32 screen rejects every pair) into the tile's
// sums in shared memory. The same pairs reach the same rule, and integer sums commute, so both give
// the same bits; scatter evaluates ~(w·8/(8 + w − 1))^dim pairs a source for a stencil w nodes wide
// against gather's 8^dim (MRI's radius-2 kernel: 37 against 512). Scatter needs the screen (its
// stencil is the screen's) and compact bins; its shared sums are 64-bit (single) or 128-bit
// (double) integers.
struct LatticeTraversal {
  bool scatter = false;
  float stencil[3] = {0, 0, 0};
  std::string why;
};
LatticeTraversal choose_lattice_traversal(const LatticePlan& plan, const lattice::PairScreen& screen);

// Seed 002's regular bins: every bin padded to `depth` slots (the deepest bin's when the plan gives
// none), and the sources beyond a capped depth spilled, bin by bin in bin order, into compact bins
// (seed 002's overflow, summed on the CPU: its sums add to the GPU's as integers, so the map keeps
// its bits).
struct RegularBins {
  std::vector<lattice::Source> slots;
  std::vector<std::uint32_t> count;
  unsigned long long depth = 0;
  std::vector<lattice::Source> spill;
  std::vector<std::uint64_t> spill_start;
};

// `room`: the device bytes the slots and the spill may take (the map's sums are counted apart).
RegularBins regular_bins(const lattice::Binned& bins, long long cap, double room, std::size_t free_bytes);

}  // namespace twobody::cuda
