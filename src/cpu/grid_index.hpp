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

  GridIndex(const PointSet& p, const GridGeometry& g, int max_slices = 1, int threads = 1)
      : sorted(p.dim(), p.size()), start(g.total + 1, 0), slice_first(g.total + 1, 0) {
    // Counting sort by cell (its scatter touches one counter per cell: few enough to stay cached).
    // Every pass but the scan and the scatter runs on `threads` threads (the index is built
    // before the traversal, and at 10^6 points, r < 25, it was a fifth of a two-thread run).
    const auto n_points = static_cast<std::int64_t>(p.size());
    std::vector<std::uint32_t> cell(p.size());
#pragma omp parallel for num_threads(threads) schedule(static)
    for (std::int64_t i = 0; i < n_points; ++i) cell[i] = static_cast<std::uint32_t>(g.cell_of(p, i));
    order.resize(p.size());
    if (threads > 1 && static_cast<std::int64_t>(threads) * g.total <= std::max<std::int64_t>(n_points, 1 << 22)) {
      sort_by_cell_threaded(cell, g.total, threads);
    } else {
      for (std::size_t i = 0; i < p.size(); ++i) ++start[cell[i] + 1];
      std::partial_sum(start.begin(), start.end(), start.begin());  // exclusive scan, shifted by one
      std::vector<std::uint32_t> fill(start.begin(), start.end() - 1);
      for (std::size_t i = 0; i < p.size(); ++i) order[fill[cell[i]]++] = static_cast<std::uint32_t>(i);
    }
    const std::uint32_t top = static_cast<std::uint32_t>(std::clamp(max_slices, 1, 1 << 16));
    for (std::int64_t c = 0; c < g.total; ++c)
      slice_first[c + 1] = slice_first[c] + std::clamp<std::uint32_t>(count(c) / 2, 1, top);
    slice_start.assign(slice_first[g.total] + 1, static_cast<std::uint32_t>(p.size()));
    // Then by slice within each cell (a counting sort of the cell's few points).
    const int last = p.dim() - 1;
    const auto z = p.coord(last);
    const auto nz = static_cast<std::uint64_t>(g.cells[last]);
    std::vector<std::uint32_t> slice, tmp, at;
#pragma omp parallel for num_threads(threads) schedule(dynamic, 1024) firstprivate(slice, tmp, at)
    for (std::int64_t c = 0; c < g.total; ++c) {
      const std::uint32_t S = slices(c), n = count(c), s0 = start[c];
      std::uint32_t* const first = slice_start.data() + slice_first[c];
      if (S == 1) {
        first[0] = s0;
        continue;
      }
      // The slice within the cell found by cell_of (rounding may put a point a hair outside it:
      // the windows' margins cover that).
      const double zc = static_cast<double>(static_cast<std::uint64_t>(c) % nz);
      slice.resize(n);
      at.assign(S + 1, 0);
      for (std::uint32_t k = 0; k < n; ++k) {
        const double f = ((z[order[s0 + k]] - g.origin[last]) / g.width[last] - zc) * static_cast<double>(S);
        slice[k] = static_cast<std::uint32_t>(std::clamp(std::floor(f), 0.0, static_cast<double>(S - 1)));
        ++at[slice[k] + 1];
      }
      std::partial_sum(at.begin(), at.end(), at.begin());
      for (std::uint32_t s = 0; s < S; ++s) first[s] = s0 + at[s];
      tmp.assign(order.begin() + s0, order.begin() + s0 + n);
      for (std::uint32_t k = 0; k < n; ++k) order[s0 + at[slice[k]]++] = tmp[k];
    }
    for (int d = 0; d < p.dim(); ++d) {
      const auto src = p.coord(d);
      auto dst = sorted.coord(d);
#pragma omp parallel for num_threads(threads) schedule(static)
      for (std::int64_t k = 0; k < n_points; ++k) dst[k] = src[order[k]];
    }
    if (p.has_weights()) {
      std::vector<double> w(p.size());
      for (std::size_t k = 0; k < order.size(); ++k) w[k] = p.weights()[order[k]];
      sorted.set_weights(std::move(w));
    }
  }
  std::uint32_t slices(std::int64_t c) const { return slice_first[c + 1] - slice_first[c]; }

  // The counting sort on `threads` threads, with the serial one's result (points of a cell in
  // input order): each thread counts the cells of its contiguous share of the points, a cell's
  // share of thread t starts after the shares of threads before t, and each thread scatters its
  // points there. T x cells counters: used while that stays within about N (or 4M) of them.
  // Serially, the count and the scatter were 0.09 s of a 10^7-point index (2 threads).
  void sort_by_cell_threaded(const std::vector<std::uint32_t>& cell, std::int64_t cells, int threads) {
    const std::size_t n = cell.size(), C = static_cast<std::size_t>(cells);
    std::vector<std::uint32_t> share(static_cast<std::size_t>(threads) * C, 0);
    const auto part = [&](int t) { return std::pair{n * t / threads, n * (t + 1) / threads}; };
#pragma omp parallel num_threads(threads)
    {
      const int t = omp_get_thread_num();
      std::uint32_t* h = share.data() + static_cast<std::size_t>(t) * C;
      const auto [lo, hi] = part(t);
      for (std::size_t i = lo; i < hi; ++i) ++h[cell[i]];
#pragma omp barrier
#pragma omp for schedule(static)
      for (std::int64_t c = 0; c < cells; ++c) {
        std::uint32_t total = 0;
        for (int u = 0; u < threads; ++u) total += share[static_cast<std::size_t>(u) * C + c];
        start[c + 1] = total;
      }
#pragma omp single
      std::partial_sum(start.begin(), start.end(), start.begin());
#pragma omp for schedule(static)
      for (std::int64_t c = 0; c < cells; ++c) {
        std::uint32_t at = start[c];
        for (int u = 0; u < threads; ++u) {
          std::uint32_t& s = share[static_cast<std::size_t>(u) * C + c];
          const std::uint32_t k = s;
          s = at;
          at += k;
        }
      }
      for (std::size_t i = lo; i < hi; ++i) order[h[cell[i]]++] = static_cast<std::uint32_t>(i);
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

inline GridPlan plan_grid(const GridGeometry& g, const GridIndex& A, const GridIndex& B, bool is_auto,
                          bool windows = true) {
  GridPlan plan;
  plan.geometry = g;
  plan.anchors = &A;
  plan.partners = &B;
  plan.is_auto = is_auto;
  plan.neighbours.resize(g.dim);
  for (int d = 0; d < g.dim; ++d) plan.neighbours[d] = axis_neighbours(g, d);
  for (auto& along : plan.neighbours[g.dim - 1]) std::sort(along.begin(), along.end());
  // Windows need each partner cell's periodic image to be unique: at least 2·refine + 1 cells on
  // every periodic axis (fewer, and one cell is a neighbour through two images).
  plan.windowed = windows && g.total <= (std::int64_t(1) << 32) && g.refine <= 127;
  if (g.periodic)
    for (int d = 0; d < g.dim; ++d) plan.windowed = plan.windowed && g.cells[d] >= 2 * g.refine + 1;
  if (g.total > (std::int64_t(1) << 32))
    throw Error(ErrorKind::Internal, "a CPU grid of more than 2^32 cells (the CPU caps its grids far below)");
  const auto work = [](const BlockPair& x) { return std::uint64_t(x.a1 - x.a0) * (x.b1 - x.b0); };
  // Each cell's work, to find the cells that would hold up the end of the run.
  std::vector<std::uint64_t> cell_work(static_cast<std::size_t>(g.total), 0);
  std::uint64_t heaviest = 0;
  for (std::int64_t c = 0; c < g.total; ++c) {
    const std::uint32_t na = A.count(c);
    plan.largest_cell = std::max<std::size_t>(plan.largest_cell, std::max(na, B.count(c)));
    plan.longest_row = std::max<std::size_t>(plan.longest_row, na);
    plan.for_each_block(c, [&](const BlockPair& bp, const BlockCells&) {
      const std::uint64_t w = bp.triangle ? std::uint64_t(bp.a1 - bp.a0) * (bp.a1 - bp.a0 - 1) / 2 : work(bp);
      plan.evaluations += w;
      cell_work[c] += work(bp);
      ++plan.blocks;
      plan.longest_row = std::max<std::size_t>(plan.longest_row, bp.b1 - bp.b0);
    });
    heaviest = std::max(heaviest, cell_work[c]);
  }
  // A cell with more than 1/1024 of the work (clustered data) would hold up the end of the run:
  // its blocks become units of their own, and the units go largest first, so that the dynamic
  // schedule ends with small ones. Otherwise the cells stay in cell order: a cell's blocks share
  // its anchors and neighbouring cells share partners (uniform 10^6 points: the sort cost 0.033 s
  // of a 0.39 s run and the lost locality 0.02 s more, bench/RESULTS.md).
  if (heaviest * 1024 > plan.evaluations) {
    std::vector<std::uint64_t> unit_work;
    for (std::int64_t c = 0; c < g.total; ++c) {
      if (cell_work[c] == 0) continue;
      const auto cell = static_cast<std::uint32_t>(c);
      if (cell_work[c] * 1024 <= plan.evaluations) {
        plan.units.push_back({cell, -1});
        unit_work.push_back(cell_work[c]);
        continue;
      }
      std::int32_t k = 0;
      plan.for_each_block(c, [&](const BlockPair& bp, const BlockCells&) {
        plan.units.push_back({cell, k++});
        unit_work.push_back(work(bp));
      });
    }
    std::vector<std::size_t> by_work(plan.units.size());
    std::iota(by_work.begin(), by_work.end(), std::size_t(0));
    std::stable_sort(by_work.begin(), by_work.end(), [&](std::size_t x, std::size_t y) { return unit_work[x] > unit_work[y]; });
    std::vector<GridUnit> units(by_work.size());
    for (std::size_t k = 0; k < by_work.size(); ++k) units[k] = plan.units[by_work[k]];
    plan.units = std::move(units);
  }
  return plan;
}

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
