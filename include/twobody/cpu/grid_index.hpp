#pragma once
// The compact cell index for limited-range statistics (seed 002's compact binning): points sorted
// by cell with a counting sort and an exclusive scan, one offset array, no padding, memory
// O(N + cells) whatever the clustering. Cells are at least r_max / refine wide, so every pair closer
// than r_max lies within `refine` cells of each other along every axis; in a periodic box the
// neighbour offsets wrap, and are de-duplicated when the box holds fewer than 2·refine + 1 cells.
// Auto traversal visits each unordered pair of cells once (the half shell, seed 004's UNICOMP):
// a cell with itself as a triangle, and with each distinct neighbour of higher index.
#include <algorithm>
#include <array>
#include <cmath>
#include <cstdint>
#include <numeric>
#include <vector>

#include "twobody/box.hpp"
#include "twobody/grid_geometry.hpp"
#include "twobody/cpu/tiled_traversal.hpp"
#include "twobody/points.hpp"

namespace twobody::cpu {

// The cell geometry is shared with the CUDA backend (twobody/grid_geometry.hpp).
using twobody::GridGeometry;
using twobody::make_grid_geometry;

// One point set sorted by cell: `sorted` holds the coordinates (and weights) in cell order,
// `order[k]` the original index of sorted point k, `start[c]..start[c+1]` the points of cell c.
struct GridIndex {
  PointSet sorted;
  std::vector<std::uint32_t> order;
  std::vector<std::uint32_t> start;

  GridIndex(const PointSet& p, const GridGeometry& g) : sorted(p.dim(), p.size()), start(g.total + 1, 0) {
    std::vector<std::uint32_t> cell(p.size());
    for (std::size_t i = 0; i < p.size(); ++i) {
      cell[i] = static_cast<std::uint32_t>(g.cell_of(p, i));
      ++start[cell[i] + 1];
    }
    std::partial_sum(start.begin(), start.end(), start.begin());  // exclusive scan, shifted by one
    std::vector<std::uint32_t> fill(start.begin(), start.end() - 1);
    order.resize(p.size());
    for (std::size_t i = 0; i < p.size(); ++i) order[fill[cell[i]]++] = static_cast<std::uint32_t>(i);
    for (int d = 0; d < p.dim(); ++d) {
      const auto src = p.coord(d);
      auto dst = sorted.coord(d);
      for (std::size_t k = 0; k < order.size(); ++k) dst[k] = src[order[k]];
    }
    if (p.has_weights()) {
      std::vector<double> w(p.size());
      for (std::size_t k = 0; k < order.size(); ++k) w[k] = p.weights()[order[k]];
      sorted.set_weights(std::move(w));
    }
  }
  std::uint32_t count(std::int64_t c) const { return start[c + 1] - start[c]; }
};

// The distinct neighbour cells of every cell along one axis (offsets -refine..refine, wrapped in a
// periodic box, dropped outside an open one).
inline std::vector<std::vector<std::int64_t>> axis_neighbours(const GridGeometry& g, int d) {
  std::vector<std::vector<std::int64_t>> out(g.cells[d]);
  for (std::int64_t c = 0; c < g.cells[d]; ++c) {
    for (int o = -g.refine; o <= g.refine; ++o) {
      std::int64_t n = c + o;
      if (g.periodic) n = ((n % g.cells[d]) + g.cells[d]) % g.cells[d];
      else if (n < 0 || n >= g.cells[d]) continue;
      if (std::find(out[c].begin(), out[c].end(), n) == out[c].end()) out[c].push_back(n);
    }
  }
  return out;
}

// The block pairs of a grid traversal (indices into the sorted sets), cell by cell, and the number
// of pair evaluations they cost. Auto: the half shell; cross: every neighbour.
struct GridPlan {
  std::vector<BlockPair> items;
  std::uint64_t evaluations = 0;
  std::size_t largest_cell = 0;
  std::size_t longest_row = 0;  // partners in the longest block (sizes the key buffer)
};

inline GridPlan plan_grid(const GridGeometry& g, const GridIndex& A, const GridIndex& B, bool is_auto) {
  GridPlan plan;
  std::vector<std::vector<std::vector<std::int64_t>>> nb(g.dim);
  for (int d = 0; d < g.dim; ++d) nb[d] = axis_neighbours(g, d);
  std::array<std::int64_t, kMaxDim> coord{};
  for (std::int64_t c = 0; c < g.total; ++c) {
    std::int64_t rest = c;
    for (int d = g.dim - 1; d >= 0; --d) {
      coord[d] = rest % g.cells[d];
      rest /= g.cells[d];
    }
    const std::uint32_t na = A.count(c);
    plan.largest_cell = std::max<std::size_t>(plan.largest_cell, std::max(na, B.count(c)));
    plan.longest_row = std::max<std::size_t>(plan.longest_row, na);
    if (na == 0) continue;
    // Odometer over the neighbour lists of every axis but the last; along the last axis the
    // neighbour cells are consecutive ids, so their points are one contiguous range of the sorted
    // set: merge each run of consecutive cells into one block (longer rows, fewer blocks).
    const int last = g.dim - 1;
    std::vector<std::int64_t> lastn = nb[last][coord[last]];
    std::sort(lastn.begin(), lastn.end());
    std::array<std::size_t, kMaxDim> k{};
    for (;;) {
      std::int64_t base = 0;
      for (int d = 0; d < last; ++d) base = base * g.cells[d] + nb[d][coord[d]][k[d]];
      base *= g.cells[last];
      for (std::size_t r0 = 0; r0 < lastn.size();) {
        std::size_t r1 = r0;
        while (r1 + 1 < lastn.size() && lastn[r1 + 1] == lastn[r1] + 1) ++r1;
        std::int64_t lo = base + lastn[r0], hi = base + lastn[r1];
        r0 = r1 + 1;
        if (is_auto) {
          if (hi < c) continue;
          lo = std::max(lo, c);
          if (lo == c) {  // the cell with itself: a triangle
            if (na > 1) {
              plan.items.push_back({A.start[c], A.start[c + 1], A.start[c], A.start[c + 1], true});
              plan.evaluations += std::uint64_t(na) * (na - 1) / 2;
            }
            ++lo;
            if (lo > hi) continue;
          }
        }
        const std::uint64_t nbn = B.start[hi + 1] - B.start[lo];
        if (nbn == 0) continue;
        plan.items.push_back({A.start[c], A.start[c + 1], B.start[lo], B.start[hi + 1], false});
        plan.evaluations += std::uint64_t(na) * nbn;
        plan.longest_row = std::max<std::size_t>(plan.longest_row, nbn);
      }
      int d = last - 1;
      while (d >= 0 && ++k[d] == nb[d][coord[d]].size()) k[d--] = 0;
      if (d < 0) break;
    }
  }
  // Largest blocks first, so the dynamic schedule ends with small ones, when one block is large
  // enough to hold up the end (clustered data). Otherwise the blocks stay in cell order: a cell's
  // blocks share its anchors and neighbouring cells share partners (uniform 10^6 points: the sort
  // cost 0.033 s of a 0.39 s run and the lost locality 0.02 s more, bench/RESULTS.md).
  const auto work = [](const BlockPair& x) { return std::uint64_t(x.a1 - x.a0) * (x.b1 - x.b0); };
  std::uint64_t largest = 0;
  for (const BlockPair& b : plan.items) largest = std::max(largest, work(b));
  if (largest * 1024 > plan.evaluations)
    std::stable_sort(plan.items.begin(), plan.items.end(),
                     [&](const BlockPair& x, const BlockPair& y) { return work(x) > work(y); });
  return plan;
}

}  // namespace twobody::cpu
