#pragma once
// The compact binning of a lattice map's sources (seed 002's counting sort), shared by the CPU and
// CUDA traversals: bins are boxes of `bin_nodes` lattice cells aligned to the nodes, x fastest, so
// a row of bins along x is one contiguous range of sources (the seed's range access). Each source
// carries what both precisions read, computed once here on the host, so every traversal starts
// from the same bits.
#include <algorithm>
#include <array>
#include <cmath>
#include <cstdint>
#include <utility>
#include <vector>

#include "twobody/detail/engine/lattice_plan.hpp"
#include "twobody/result.hpp"

namespace twobody::lattice {

// One source in bin order, with what both precisions read.
struct Source {
  double x[3];         // float64 position
  std::int64_t b[3];   // its floor node: floor((x − o) / h)
  float f[3];          // fl32((x − node(b)) / h): its offset from that node, in spacings (Single)
  double re, im, aux;  // strength, imaginary part, Blinn's R²
};

// Axis k's bins: boxes of `nodes` lattice cells; bin 0 starts at node `first` (negative on an open
// axis, whose bins reach `reach` nodes beyond the lattice so that sources just outside it count).
struct AxisBins {
  std::int64_t n = 1, first = 0, reach = 0, nb = 1, nodes = 1;
  bool periodic = false;
  // The bin of a source at t = (x − o)/h, or −1 when it is too far from the lattice to matter.
  std::int64_t bin_of(double t) const {
    if (periodic) {
      double tw = t - std::floor(t / static_cast<double>(n)) * static_cast<double>(n);
      const auto b = static_cast<std::int64_t>(std::floor(tw / static_cast<double>(nodes)));
      return std::clamp<std::int64_t>(b, 0, nb - 1);
    }
    if (!(t > static_cast<double>(-reach)) || !(t < static_cast<double>(n - 1 + reach))) return -1;
    const auto b = static_cast<std::int64_t>(std::floor((t - static_cast<double>(first)) / static_cast<double>(nodes)));
    return std::clamp<std::int64_t>(b, 0, nb - 1);
  }
  // The bins holding sources that may lie within `reach` nodes of nodes [lo, hi], as sorted
  // disjoint runs [first, last] (a periodic axis may wrap: two runs, or all bins once).
  void runs_near(std::int64_t lo, std::int64_t hi, std::vector<std::pair<std::int64_t, std::int64_t>>& out) const {
    out.clear();
    const std::int64_t plo = lo - reach, phi = hi + reach;  // node positions, a bin's slack included
    if (!periodic) {
      const std::int64_t b0 = std::max<std::int64_t>(0, (plo - first) / nodes - 1);
      const std::int64_t b1 = std::min<std::int64_t>(nb - 1, (phi - first) / nodes + 1);
      if (b0 <= b1) out.emplace_back(b0, b1);
      return;
    }
    if (phi - plo + 1 >= n) {
      out.emplace_back(0, nb - 1);
      return;
    }
    std::vector<char> mark(static_cast<std::size_t>(nb), 0);
    for (std::int64_t p = plo; p <= phi; ++p) {
      const std::int64_t w = ((p % n) + n) % n;
      mark[static_cast<std::size_t>(w / nodes)] = 1;
    }
    for (std::int64_t b = 0; b < nb;) {
      if (!mark[static_cast<std::size_t>(b)]) {
        ++b;
        continue;
      }
      std::int64_t e = b;
      while (e + 1 < nb && mark[static_cast<std::size_t>(e + 1)]) ++e;
      out.emplace_back(b, e);
      b = e + 1;
    }
  }
};

// Large host arrays that are written whole: never zero-filled, on huge pages (twobody/result.hpp).
template <class T>
using HostArray = std::vector<T, DefaultInitAllocator<T>>;

struct Binned {
  HostArray<Source> sources;        // in bin order
  HostArray<std::uint64_t> start;   // bins + 1 offsets
  std::array<AxisBins, 3> axis;
  std::uint64_t bin_id(std::int64_t bx, std::int64_t by, std::int64_t bz) const {
    return static_cast<std::uint64_t>(bx + axis[0].nb * (by + axis[1].nb * bz));
  }
};

// The plan's bins along each axis (Error(Resource) when they would number over 2^32).
std::array<AxisBins, 3> axis_bins(const LatticePlan& plan);

// The plan's sources sorted into its bins, each bin's in input order (sources too far from the
// lattice to reach a node left out), on plan.threads threads.
Binned bin_sources(const LatticePlan& plan);

// Both traversals' tiles: boxes of this many nodes per axis (the GPU's blocks of 8×8×8 threads).
constexpr int kTileNodes = 8;

// A node's value from its exact sum: rounded once to float64, then to float32 in Single; 0 where
// the node is excluded. (The GPU's lattice_values_kernel does the same in Single, on the device.)
inline double node_value(const SumGrid& grid, FixedSum sum, bool excluded, bool single) {
  const double v = excluded ? 0.0 : grid.value(sum);
  return single ? static_cast<double>(static_cast<float>(v)) : v;
}

// out.excluded_count from out.excluded, and no mask where it excludes nothing.
inline void finish_mask(LatticeMap& out) {
  out.excluded_count = 0;
  for (const std::uint8_t e : out.excluded) out.excluded_count += e != 0;
  if (out.excluded_count == 0) out.excluded.clear();
}

// A double-precision map's values from a backend's 128-bit sums (FixedSum's bytes, a node's
// components adjacent) by node_value; nodes `mask` excludes (Coulomb; empty: none) are 0. Fills
// out.values, out.excluded and out.excluded_count, on plan.threads threads.
void write_wide_values(const LatticePlan& plan, const unsigned char* sums, const std::vector<std::uint8_t>& mask,
                       LatticeMap& out);

}  // namespace twobody::lattice
