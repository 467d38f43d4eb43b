// The CPU's compact cell index and its traversal plan (grid_index.hpp).
//
// Sorting by cell is a permutation of the whole catalogue, and at 10^7–10^8 points in random order
// its cost was all cache and TLB misses: a one-pass counting sort scatters every point to a random
// place among millions of cells (10^8 uniform points, 2^26 cells: 72 s of a 126 s run on two
// threads, bench/RESULTS.md). Here the sort takes two passes that each touch few places at once —
// by blocks of cells first (a few hundred, one write stream each per column), the coordinates
// moving with their points, then by cell within a block (a block's points and counters sit in
// cache). Slices within a cell are then sorted on the sorted copy.
#include "twobody/detail/cpu/grid_index.hpp"

#include <omp.h>

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstdint>
#include <memory>
#include <numeric>
#include <span>
#include <utility>
#include <vector>

#include "twobody/result.hpp"

namespace twobody::cpu {
namespace {

// Memory the sort writes before it reads, not zeroed first, and (when large) on transparent huge
// pages: at 10^8 points, zeroing the sorted copy's 2.4 GB in 4 KiB page faults took 7.6 s of the
// index's 16 s on the 2-core machine (bench/RESULTS.md).
template <class T>
using Scratch = std::vector<T, DefaultInitAllocator<T>>;

// Moves the entries [k0, k0 + place.size()) of `order` and of every column so that entry k0 + t
// goes to k0 + place[t] (place a permutation of 0..size-1), through the scratch `moved`/`spare`.
void permute_range(std::size_t k0, std::span<const std::uint32_t> place, std::vector<std::uint32_t>& order,
                   const std::vector<double*>& columns, std::vector<std::uint32_t>& moved, std::vector<double>& spare) {
  const std::size_t m = place.size();
  moved.assign(order.begin() + static_cast<std::ptrdiff_t>(k0), order.begin() + static_cast<std::ptrdiff_t>(k0 + m));
  for (std::size_t t = 0; t < m; ++t) order[k0 + place[t]] = moved[t];
  for (double* column : columns) {
    spare.assign(column + k0, column + k0 + m);
    for (std::size_t t = 0; t < m; ++t) column[k0 + place[t]] = spare[t];
  }
}

// The points in cell order, stable (each cell's points in input order): `order` gets the
// permutation, `start` (cells + 1 entries) each cell's first point, and every column src[c] is
// written to dst[c] in that order. Pass 1 moves each point, with its columns, to its block of
// cells (thread t's contiguous share of the points after the shares of threads before it: input
// order within a block), writing to one stream a block and column; pass 2 sorts each block by cell
// where it lies, its points and counters in cache.
void sort_by_cell(std::span<const std::uint32_t> cell, std::uint64_t cells, int threads,
                  const std::vector<const double*>& src, const std::vector<double*>& dst,
                  std::vector<std::uint32_t>& order, std::vector<std::uint32_t>& start) {
  const std::size_t n = cell.size(), columns = src.size();
  // Open write streams in pass 1: blocks x (columns + 2), about 1,000 (4,000 were twice as slow
  // at 10^7 points: their pages outran the TLB).
  const std::uint64_t max_blocks = std::max<std::uint64_t>(16, 1024 / (columns + 2));
  const int shift = cells <= max_blocks ? 0 : std::bit_width((cells - 1) / max_blocks);
  const std::size_t blocks = static_cast<std::size_t>(((cells - 1) >> shift) + 1);
  const auto T = static_cast<std::size_t>(std::max(threads, 1));
  Scratch<std::uint32_t> grouped(n);  // each point's cell, in pass 1's order
  std::vector<std::size_t> at(T * blocks, 0), block_start(blocks + 1, 0);
  order.resize(n);
  const auto share = [&](std::size_t t) { return std::pair{n * t / T, n * (t + 1) / T}; };
#pragma omp parallel num_threads(static_cast<int>(T))
  {
    const auto t = static_cast<std::size_t>(omp_get_thread_num());
    std::size_t* mine = at.data() + t * blocks;
    const auto [lo, hi] = share(t);
    for (std::size_t i = lo; i < hi; ++i) ++mine[cell[i] >> shift];
#pragma omp barrier
#pragma omp single
    {
      std::size_t next = 0;
      for (std::size_t b = 0; b < blocks; ++b) {
        block_start[b] = next;
        for (std::size_t u = 0; u < T; ++u) {
          const std::size_t k = at[u * blocks + b];
          at[u * blocks + b] = next;
          next += k;
        }
      }
      block_start[blocks] = next;
    }
    for (std::size_t i = lo; i < hi; ++i) {
      const std::size_t k = mine[cell[i] >> shift]++;
      order[k] = static_cast<std::uint32_t>(i);
      grouped[k] = cell[i];
      for (std::size_t c = 0; c < columns; ++c) dst[c][k] = src[c][i];
    }
  }
  const std::size_t span = std::size_t(1) << shift;
#pragma omp parallel num_threads(static_cast<int>(T))
  {
    std::vector<std::uint32_t> fill(span + 1), place, moved;
    std::vector<double> spare;
#pragma omp for schedule(dynamic, 1)
    for (std::size_t b = 0; b < blocks; ++b) {
      const std::uint64_t c0 = std::uint64_t(b) << shift;
      const std::size_t width = static_cast<std::size_t>(std::min<std::uint64_t>(span, cells - c0));
      const std::size_t k0 = block_start[b], k1 = block_start[b + 1], m = k1 - k0;
      std::fill(fill.begin(), fill.begin() + static_cast<std::ptrdiff_t>(width) + 1, 0u);
      for (std::size_t k = k0; k < k1; ++k) ++fill[grouped[k] - c0 + 1];
      std::partial_sum(fill.begin(), fill.begin() + static_cast<std::ptrdiff_t>(width) + 1, fill.begin());
      for (std::size_t c = 0; c < width; ++c) start[c0 + c] = static_cast<std::uint32_t>(k0 + fill[c]);
      if (width == 1) continue;  // one cell: already in place
      place.resize(m);
      for (std::size_t k = 0; k < m; ++k) place[k] = fill[grouped[k0 + k] - c0]++;
      permute_range(k0, place, order, dst, moved, spare);
    }
  }
  start[cells] = static_cast<std::uint32_t>(n);
}

}  // namespace

GridIndex::GridIndex(const PointSet& p, const GridGeometry& g, int max_slices, int threads)
    : start(g.total + 1, 0), slice_first(g.total + 1, 0) {
  threads = std::max(threads, 1);
  const auto n_points = static_cast<std::int64_t>(p.size());
  // The sorted coordinates live in `columns`, which the sorted set borrows (and keeps alive).
  auto columns = std::make_shared<std::vector<Scratch<double>>>();
  columns->reserve(static_cast<std::size_t>(p.dim()));
  std::vector<double> weights(p.has_weights() ? p.size() : 0);
  std::vector<const double*> src;
  std::vector<double*> dst;
  for (int d = 0; d < p.dim(); ++d) {
    src.push_back(p.coord(d).data());
    dst.push_back(columns->emplace_back(p.size()).data());
  }
  if (p.has_weights()) {
    src.push_back(p.weights().data());
    dst.push_back(weights.data());
  }
  {
    Scratch<std::uint32_t> cell(p.size());
#pragma omp parallel for num_threads(threads) schedule(static)
    for (std::int64_t i = 0; i < n_points; ++i) cell[i] = static_cast<std::uint32_t>(g.cell_of(p, i));
    sort_by_cell(cell, static_cast<std::uint64_t>(g.total), threads, src, dst, order, start);
  }

  const std::uint32_t top = static_cast<std::uint32_t>(std::clamp(max_slices, 1, 1 << 16));
#pragma omp parallel for num_threads(threads) schedule(static)
  for (std::int64_t c = 0; c < g.total; ++c) slice_first[c + 1] = std::clamp<std::uint32_t>(count(c) / 2, 1, top);
  std::partial_sum(slice_first.begin(), slice_first.end(), slice_first.begin());
  slice_start.assign(slice_first[g.total] + 1, static_cast<std::uint32_t>(p.size()));
  // Then by slice within each cell: a counting sort of the cell's few points, applied to the
  // order and to every sorted column.
  const int last = p.dim() - 1;
  const auto nz = static_cast<std::uint64_t>(g.cells[last]);
  const double* z = dst[last];
#pragma omp parallel num_threads(threads)
  {
    std::vector<std::uint32_t> slice, at, moved;
    std::vector<double> spare;
#pragma omp for schedule(dynamic, 1024)
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
        const double f = ((z[s0 + k] - g.origin[last]) / g.width[last] - zc) * static_cast<double>(S);
        slice[k] = static_cast<std::uint32_t>(std::clamp(std::floor(f), 0.0, static_cast<double>(S - 1)));
        ++at[slice[k] + 1];
      }
      std::partial_sum(at.begin(), at.end(), at.begin());
      for (std::uint32_t s = 0; s < S; ++s) first[s] = s0 + at[s];
      for (std::uint32_t k = 0; k < n; ++k) slice[k] = at[slice[k]]++;  // each point's place in the cell
      permute_range(s0, slice, order, dst, moved, spare);
    }
  }
  std::vector<std::span<const double>> spans;
  for (const auto& column : *columns) spans.emplace_back(column.data(), column.size());
  sorted = PointSet::borrow(std::move(spans), std::move(columns));
  if (p.has_weights()) sorted.set_weights(std::move(weights));
}

GridPlan plan_grid(const GridGeometry& g, const GridIndex& A, const GridIndex& B, bool is_auto, bool windows,
                   int threads) {
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
  // Each cell's work, to find the cells that would hold up the end of the run (on `threads`
  // threads: at 10^8 points the grid has 2^26 cells).
  std::vector<std::uint64_t> cell_work(static_cast<std::size_t>(g.total), 0);
  std::uint64_t heaviest = 0, evaluations = 0, blocks = 0;
  std::size_t largest_cell = 0, longest_row = 0;
#pragma omp parallel for num_threads(std::max(threads, 1)) schedule(dynamic, 4096) \
    reduction(+ : evaluations, blocks) reduction(max : heaviest, largest_cell, longest_row)
  for (std::int64_t c = 0; c < g.total; ++c) {
    const std::uint32_t na = A.count(c);
    largest_cell = std::max<std::size_t>(largest_cell, std::max(na, B.count(c)));
    std::uint64_t pairs = 0, work_here = 0, blocks_here = 0;
    std::size_t row = na;
    plan.for_each_block(c, [&](const BlockPair& bp, const BlockCells&) {
      pairs += bp.triangle ? std::uint64_t(bp.a1 - bp.a0) * (bp.a1 - bp.a0 - 1) / 2 : work(bp);
      work_here += work(bp);
      ++blocks_here;
      row = std::max<std::size_t>(row, bp.b1 - bp.b0);
    });
    cell_work[c] = work_here;
    evaluations += pairs;
    blocks += blocks_here;
    longest_row = std::max(longest_row, row);
    heaviest = std::max(heaviest, work_here);
  }
  plan.evaluations = evaluations;
  plan.blocks = blocks;
  plan.largest_cell = largest_cell;
  plan.longest_row = longest_row;
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

}  // namespace twobody::cpu
