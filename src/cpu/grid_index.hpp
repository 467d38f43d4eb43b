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
#include <utility>
#include <vector>

#include <omp.h>

#include "twobody/box.hpp"
#include "twobody/detail/engine/grid_geometry.hpp"
#include "twobody/detail/cpu/tiled_traversal.hpp"
#include "twobody/error.hpp"
#include "twobody/points.hpp"

namespace twobody::cpu {

// The cell geometry is shared with the CUDA backend (twobody/grid_geometry.hpp).
using twobody::GridGeometry;
using twobody::make_grid_geometry;

// One point set sorted by cell: `sorted` holds the coordinates (and weights) in cell order,
// `order[k]` the original index of sorted point k, `start[c]..start[c+1]` the points of cell c.
// Within a cell the points are sorted by equal slices of the cell along the last axis: cell c has
// slices(c) = slice_first[c+1] - slice_first[c] of them (about two points each, at most
// `max_slices`), and `slice_start[slice_first[c] + s]` is the first point of its slice s, so
// that an anchor's partners within a distance along the last axis are one range of points found
// by arithmetic (GridWindows). Slices follow each cell's count, not the mean: a concentrated
// catalogue gets fine slices where its pairs are, and memory stays O(N + cells).
struct GridIndex {
  PointSet sorted;
  std::vector<std::uint32_t> order;
  std::vector<std::uint32_t> start;
  std::vector<std::uint32_t> slice_first;
  std::vector<std::uint32_t> slice_start;

  // Built on `threads` threads; the result does not depend on their number (points of a slice in
  // input order), grid_index.cpp says how.
  GridIndex(const PointSet& p, const GridGeometry& g, int max_slices = 1, int threads = 1);
  std::uint32_t slices(std::int64_t c) const { return slice_first[c + 1] - slice_first[c]; }
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
// Where a block's partner cells lie relative to its anchor cell: the anchor cell's id and, per
// axis, the offset (-refine..refine) of the partner cell (along the last axis, of any cell of the
// run: they share one periodic image).
struct BlockCells {
  std::uint32_t anchor = 0;
  std::array<std::int8_t, kMaxDim> offset{};
};

// A unit of the traversal's work: an anchor cell's blocks, or (a cell heavy enough to hold up the
// end of the run) one of them.
struct GridUnit {
  std::uint32_t cell = 0;
  std::int32_t block = -1;  // -1: every block of the cell
};

// The traversal's blocks are made as it goes, a cell's when a thread takes the cell (for_each_block),
// never held all at once: at about six blocks a cell a list of them held 52 bytes a block, more than
// the points themselves (uniform 10^7: 1.6 GB of cell pairs for a 240 MB catalogue).
struct GridPlan {
  GridGeometry geometry;
  const GridIndex* anchors = nullptr;
  const GridIndex* partners = nullptr;
  bool is_auto = true;
  std::vector<std::vector<std::vector<std::int64_t>>> neighbours;  // per axis, per cell coordinate
  // The units in traversal order; empty: every cell, whole, in cell order.
  std::vector<GridUnit> units;
  bool windowed = false;  // every neighbour cell appears once (no axis wraps onto itself)
  std::uint64_t evaluations = 0;
  std::uint64_t blocks = 0;
  std::size_t largest_cell = 0;
  std::size_t longest_row = 0;  // partners in the longest block (sizes the key buffer)

  std::size_t unit_count() const { return units.empty() ? static_cast<std::size_t>(geometry.total) : units.size(); }

  // fn(block, cells) for each block of anchor cell c (cells: when windowed).
  template <class Fn>
  void for_each_block(std::int64_t c, Fn&& fn) const;

  // fn(block, cells) for each block of unit w.
  template <class Fn>
  void for_each_unit(std::size_t w, Fn&& fn) const {
    if (units.empty()) return for_each_block(static_cast<std::int64_t>(w), fn);
    const GridUnit u = units[w];
    std::int32_t k = 0;
    for_each_block(u.cell, [&](const BlockPair& bp, const BlockCells& bc) {
      if (u.block < 0 || k++ == u.block) fn(bp, bc);
    });
  }

  // The traversal's view of the units without windows (tiled_traversal.hpp's for_each items).
  struct Units {
    const GridPlan& plan;
    template <class Fn>
    void for_each(std::size_t w, Fn&& fn) const {
      plan.for_each_unit(w, [&](const BlockPair& bp, const BlockCells&) { fn(bp); });
    }
  };
};

template <class Fn>
void GridPlan::for_each_block(std::int64_t c, Fn&& fn) const {
  const GridGeometry& g = geometry;
  const std::uint32_t na = anchors->count(c);
  if (na == 0) return;
  const auto offset_of = [&](int d, std::int64_t from, std::int64_t to) {
    std::int64_t o = to - from;
    if (o > g.refine) o -= g.cells[d];
    if (o < -g.refine) o += g.cells[d];
    return static_cast<std::int8_t>(o);
  };
  std::array<std::int64_t, kMaxDim> coord{}, partner{};
  std::int64_t rest = c;
  for (int d = g.dim - 1; d >= 0; --d) {
    coord[d] = rest % g.cells[d];
    rest /= g.cells[d];
  }
  const auto emit = [&](const BlockPair& bp, const std::array<std::int64_t, kMaxDim>& to) {
    BlockCells bc;
    if (windowed) {
      bc.anchor = static_cast<std::uint32_t>(c);
      for (int d = 0; d < g.dim; ++d) bc.offset[d] = offset_of(d, coord[d], to[d]);
    }
    fn(bp, bc);
  };
  const GridIndex& A = *anchors;
  const GridIndex& B = *partners;
  // Odometer over the neighbour lists of every axis but the last; along the last axis the
  // neighbour cells are consecutive ids, so their points are one contiguous range of the sorted
  // set: merge each run of consecutive cells into one block (longer rows, fewer blocks).
  const int last = g.dim - 1;
  const std::vector<std::int64_t>& lastn = neighbours[last][coord[last]];  // sorted by plan_grid
  const std::size_t nlast = lastn.size();
  std::array<std::size_t, kMaxDim> k{};
  for (;;) {
    std::int64_t base = 0;
    for (int d = 0; d < last; ++d) {
      partner[d] = neighbours[d][coord[d]][k[d]];
      base = base * g.cells[d] + partner[d];
    }
    base *= g.cells[last];
    for (std::size_t r0 = 0; r0 < nlast;) {
      std::size_t r1 = r0;
      // A windowed run keeps one periodic image: with exactly 2·refine + 1 cells along the last
      // axis, ids consecutive across the wrap (0 .. refine and cells - refine .. cells - 1 seen from
      // cell 0) are neighbours through different images, and one shift cannot serve them both.
      while (r1 + 1 < nlast && lastn[r1 + 1] == lastn[r1] + 1 &&
             (!windowed || offset_of(last, coord[last], lastn[r1 + 1]) == offset_of(last, coord[last], lastn[r1]) + 1))
        ++r1;
      std::int64_t lo = base + lastn[r0], hi = base + lastn[r1];
      partner[last] = lastn[r0];
      r0 = r1 + 1;
      if (is_auto) {
        if (hi < c) continue;
        lo = std::max(lo, c);
        if (lo == c) {  // the cell with itself: a triangle
          if (na > 1) emit({A.start[c], A.start[c + 1], A.start[c], A.start[c + 1], true}, coord);
          ++lo;
          if (lo > hi) continue;
        }
      }
      if (B.start[hi + 1] == B.start[lo]) continue;
      emit({A.start[c], A.start[c + 1], B.start[lo], B.start[hi + 1], false}, partner);
    }
    int d = last - 1;
    while (d >= 0 && ++k[d] == neighbours[d][coord[d]].size()) k[d--] = 0;
    if (d < 0) break;
  }
}

// The plan of a grid traversal: each cell's blocks counted (on `threads` threads), the cells that
// would hold up the end of the run split into their blocks.
GridPlan plan_grid(const GridGeometry& g, const GridIndex& A, const GridIndex& B, bool is_auto, bool windows = true,
                   int threads = 1);

// A block with the bounds of its partner cells seen from its anchor cell: along every axis but
// the last, the partner cell's extent in the anchor's periodic frame; along the last, the shift
// that brings the partners' coordinates into that frame, and the first slices of the cells of
// the partners' column.
template <int D>
struct GridBlock : BlockPair {
  double lo[D > 1 ? D - 1 : 1], hi[D > 1 ? D - 1 : 1];
  double shift = 0;
  const std::uint32_t* column = nullptr;  // slice_first of the column's first cell
  // Per axis, the periodic image of the partners seen from the anchor (-1, 0, 1 box lengths):
  // every pair of a windowed block that can be in range is in range in this image.
  std::int8_t image[D > 0 ? D : 1] = {};
};

// Per anchor, the partners of a block that can lie within r_max (the rule of Corrfunc's z-sorted
// cells, in our own form): the anchor's distance to the partner cells across the other axes
// leaves a half-width h = sqrt(r_max² - d²) along the last axis, and the slices within h of the
// anchor are one range of partners, found by arithmetic; a block whose cells are farther than
// r_max from the anchor gives it no partners at all. The cell bounds widen, and r_max and h grow,
// by margins far above float64 rounding, so no pair within r_max is dropped (the pairs kept
// beyond it are binned out as before).
template <int D>
class GridWindows {
 public:
  GridWindows(const GridGeometry& g, const GridPlan& plan, const GridIndex& partners, const SoaView<D>& A,
              double rmax)
      : g_(g), plan_(plan), partners_(partners), A_(A) {
    double scale = 0;
    for (int d = 0; d < D; ++d) scale = std::max(scale, std::abs(g.origin[d]) + g.width[d] * g.cells[d]);
    margin_ = 1e-9 * scale;
    const double r = rmax * (1 + 1e-9) + margin_;
    r2_ = r * r;
    per_cell_ = 1.0 / g.width[D - 1];
    last_cell_ = static_cast<double>(g.cells[D - 1] - 1);
  }

  // fn(block) for each block of unit w (tiled_traversal.hpp's for_each items).
  template <class Fn>
  void for_each(std::size_t w, Fn&& fn) const {
    plan_.for_each_unit(w, [&](const BlockPair& bp, const BlockCells& bc) { fn(block(bp, bc)); });
  }

  GridBlock<D> block(const BlockPair& bp, const BlockCells& bc) const {
    GridBlock<D> b;
    static_cast<BlockPair&>(b) = bp;
    std::int64_t rest = bc.anchor;
    std::int64_t coord[D];
    for (int d = D - 1; d >= 0; --d) {
      coord[d] = rest % g_.cells[d];
      rest /= g_.cells[d];
    }
    std::int64_t column = 0;
    for (int d = 0; d < D - 1; ++d) {
      const std::int64_t unwrapped = coord[d] + bc.offset[d];
      const double lo = g_.origin[d] + static_cast<double>(unwrapped) * g_.width[d];
      b.lo[d] = lo - margin_;
      b.hi[d] = lo + g_.width[d] + margin_;
      column = column * g_.cells[d] + (unwrapped + g_.cells[d]) % g_.cells[d];
      b.image[d] = static_cast<std::int8_t>(unwrapped < 0 ? -1 : (unwrapped >= g_.cells[d] ? 1 : 0));
    }
    // The partner run's image: its cells sit at anchor + offset, unwrapped, so their points move
    // by a whole box length where the offset crossed the box's side.
    const std::int64_t unwrapped = coord[D - 1] + bc.offset[D - 1];
    const std::int64_t q = unwrapped < 0 ? -1 : (unwrapped >= g_.cells[D - 1] ? 1 : 0);
    b.image[D - 1] = static_cast<std::int8_t>(q);
    b.shift = static_cast<double>(q) * g_.width[D - 1] * static_cast<double>(g_.cells[D - 1]) + g_.origin[D - 1];
    b.column = partners_.slice_first.data() + static_cast<std::size_t>(column * g_.cells[D - 1]);
    return b;
  }

  std::pair<std::size_t, std::size_t> operator()(const GridBlock<D>& b, std::size_t i) const {
    double d2 = 0;
    for (int d = 0; d < D - 1; ++d) {
      const double x = A_.x[d][i];
      const double t = std::max({b.lo[d] - x, x - b.hi[d], 0.0});
      d2 += t * t;
    }
    if (d2 >= r2_) return {b.b0, b.b0};
    const double h = std::sqrt(r2_ - d2) + margin_;
    const double z = A_.x[D - 1][i] - b.shift;
    // The slices of the column that hold z - h and z + h (clamped to the column: points a hair
    // outside it sit in its end slices); the block's own range [b0, b1) cuts them to its cells.
    const auto slice_of = [&](double u) {
      const double cell = std::clamp(std::floor(u), 0.0, last_cell_);
      const std::uint32_t* first = b.column + static_cast<std::size_t>(cell);
      const auto S = static_cast<double>(first[1] - first[0]);
      return first[0] + static_cast<std::size_t>(std::clamp(std::floor((u - cell) * S), 0.0, S - 1));
    };
    const std::uint32_t* slice_start = partners_.slice_start.data();
    std::size_t j0 = std::max<std::size_t>(b.b0, slice_start[slice_of((z - h) * per_cell_)]);
    const std::size_t j1 = std::min<std::size_t>(b.b1, slice_start[slice_of((z + h) * per_cell_) + 1]);
    if (b.triangle) j0 = std::max(j0, i + 1);
    return {j0, j1};
  }

 private:
  const GridGeometry& g_;
  const GridPlan& plan_;
  const GridIndex& partners_;
  const SoaView<D>& A_;
  double margin_ = 0, r2_ = 0, per_cell_ = 0, last_cell_ = 0;
};

}  // namespace twobody::cpu
