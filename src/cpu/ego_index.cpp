// The EGO order and tree of a vector set (ego_index.hpp).
#include "twobody/detail/cpu/ego_index.hpp"

#include "twobody/detail/cpu/dim_stats.hpp"
#include "twobody/detail/cpu/vector_rows.hpp"

#include <algorithm>
#include <cmath>
#include <numeric>
#include <utility>

#if defined(_OPENMP) && __has_include(<parallel/algorithm>)
#include <parallel/algorithm>
#define TWOBODY_PARALLEL_SORT 1
#endif

namespace twobody::cpu {

namespace {

// Cells per dimension at most: cell indices stay far inside int32, and a dimension with a huge
// extent against eps still sorts (a coarser cell there only prunes less).
constexpr double kMaxCells = 1 << 20;

}  // namespace

EgoGrid EgoGrid::make(const VectorSet& a, const VectorSet* b, double eps, int threads) {
  const int d = a.dim();
  DimStats s(d);
  s.add(a, threads);
  if (b) s.add(*b, threads);
  EgoGrid g;
  g.finite = s.finite;
  if (!g.finite) return g;
  std::vector<int> keys;
  std::vector<double> width(static_cast<std::size_t>(d));
  for (int k = 0; k < d; ++k) {
    const double extent = s.hi[k] - s.lo[k];
    width[k] = std::max(eps, extent / kMaxCells);
    if (width[k] > 0 && extent >= width[k]) keys.push_back(k);  // two cells or more
  }
  // Super-EGO's reordering: the widest spread first, so the first cells already separate most pairs.
  std::stable_sort(keys.begin(), keys.end(), [&](int x, int y) { return s.variance(x) > s.variance(y); });
  for (int k : keys) {
    g.dims.push_back(k);
    g.origin.push_back(s.lo[k]);
    g.width.push_back(width[k]);
  }
  return g;
}

double EgoIndex::bytes(std::size_t n, int d, std::size_t keys, std::size_t leaf) {
  const double nodes = 4.0 * static_cast<double>(n) / static_cast<double>(std::max<std::size_t>(leaf, 1)) + 1;
  return static_cast<double>(n) * (16.0 * d + 4.0 + 4.0 * static_cast<double>(keys)) + nodes * (24.0 * d + 20.0);
}

EgoIndex::EgoIndex(const VectorSet& v, const EgoGrid& grid, std::size_t leaf, int threads) : dim_(v.dim()) {
  std::vector<std::int32_t> cells;
  sort_by_cell(v, grid, cells, threads);
  // The rows in EGO order: the leaves then read their partners contiguously.
  const std::size_t n = v.size(), d = static_cast<std::size_t>(dim_);
  std::vector<double> rows(n * d);
  const auto count = static_cast<std::ptrdiff_t>(n);
#pragma omp parallel for num_threads(threads) schedule(static)
  for (std::ptrdiff_t p = 0; p < count; ++p) v.row_f64(order_[static_cast<std::size_t>(p)], rows.data() + static_cast<std::size_t>(p) * d);
  rows_ = VectorSet::from_rows(std::move(rows), n, dim_);
  build_tree(cells, grid.dims.size(), std::max<std::size_t>(leaf, 1));
  cells = {};
  build_boxes(threads);
  panel_leaves(threads);
}

void EgoIndex::sort_by_cell(const VectorSet& v, const EgoGrid& grid, std::vector<std::int32_t>& cells, int threads) {
  const std::size_t n = v.size(), keys = grid.dims.size();
  cells.resize(n * keys);
  const auto count = static_cast<std::ptrdiff_t>(n);
#pragma omp parallel num_threads(threads)
  {
    std::vector<double> r(static_cast<std::size_t>(dim_));
#pragma omp for schedule(static)
    for (std::ptrdiff_t i = 0; i < count; ++i) {
      v.row_f64(static_cast<std::size_t>(i), r.data());
      std::int32_t* c = cells.data() + static_cast<std::size_t>(i) * keys;
      // (x − origin) / width lies in [0, 2^20 + 2]: the origin is the least coordinate and the
      // width at least extent / 2^20.
      for (std::size_t t = 0; t < keys; ++t)
        c[t] = static_cast<std::int32_t>(std::floor((r[static_cast<std::size_t>(grid.dims[t])] - grid.origin[t]) / grid.width[t]));
    }
  }
  order_.resize(n);
  std::iota(order_.begin(), order_.end(), std::uint32_t{0});
  const auto by_cell = [&](std::uint32_t x, std::uint32_t y) {
    const std::int32_t* cx = cells.data() + static_cast<std::size_t>(x) * keys;
    const std::int32_t* cy = cells.data() + static_cast<std::size_t>(y) * keys;
    for (std::size_t t = 0; t < keys; ++t)
      if (cx[t] != cy[t]) return cx[t] < cy[t];
    return x < y;
  };
  // A total order (ties by index): every sort gives the same order, whatever the threads.
#ifdef TWOBODY_PARALLEL_SORT
  __gnu_parallel::sort(order_.begin(), order_.end(), by_cell,
                       __gnu_parallel::default_parallel_tag(static_cast<__gnu_parallel::_ThreadIndex>(std::max(1, threads))));
#else
  std::sort(order_.begin(), order_.end(), by_cell);
#endif
}

void EgoIndex::build_tree(const std::vector<std::int32_t>& cells, std::size_t keys, std::size_t leaf) {
  // cell(p, t): key dimension t's cell of the row at position p. Along the first dimension where a
  // range's first and last rows differ, the cells rise through the range (every row between them
  // shares the cells before it: the order is lexicographic).
  const auto cell = [&](std::uint32_t p, std::size_t t) { return cells[static_cast<std::size_t>(order_[p]) * keys + t]; };
  nodes_.clear();
  nodes_.push_back({0, static_cast<std::uint32_t>(order_.size()), -1});
  std::vector<std::size_t> same{0};  // per node: its key dimensions before this one hold one cell
  for (std::size_t k = 0; k < nodes_.size(); ++k) {
    const std::uint32_t b = nodes_[k].begin, e = nodes_[k].end;
    if (e - b <= leaf) continue;
    std::size_t t = same[k];
    while (t < keys && cell(b, t) == cell(e - 1, t)) ++t;
    const std::uint32_t mid = b + (e - b) / 2;
    std::uint32_t split = mid;
    if (t < keys) {
      // Split at the edge of the middle row's cell that lies nearer the middle (a cell boundary,
      // not the middle index: then both halves are compact along t).
      const std::int32_t c = cell(mid, t);
      const auto first_where = [](std::uint32_t lo, std::uint32_t hi, auto pred) {
        while (lo < hi) {
          const std::uint32_t m = lo + (hi - lo) / 2;
          if (pred(m)) hi = m;
          else lo = m + 1;
        }
        return lo;
      };
      const std::uint32_t lower = first_where(b, e, [&](std::uint32_t p) { return cell(p, t) >= c; });
      const std::uint32_t upper = first_where(lower, e, [&](std::uint32_t p) { return cell(p, t) > c; });
      // The first and last rows differ along t, so one edge lies strictly inside the range.
      const bool lower_ok = lower > b, upper_ok = upper < e;
      split = !upper_ok || (lower_ok && mid - lower <= upper - mid) ? lower : upper;
    }
    nodes_[k].child = static_cast<std::int32_t>(nodes_.size());
    nodes_.push_back({b, split, -1});
    nodes_.push_back({split, e, -1});
    same.push_back(t);
    same.push_back(t);
  }
  leaves_ = static_cast<std::size_t>(std::count_if(nodes_.begin(), nodes_.end(), [](const EgoNode& x) { return x.leaf(); }));
}

void EgoIndex::build_boxes(int threads) {
  const std::size_t d = static_cast<std::size_t>(dim_);
  lo_.assign(nodes_.size() * d, 0.0);
  hi_.assign(nodes_.size() * d, 0.0);
  const auto count = static_cast<std::ptrdiff_t>(nodes_.size());
#pragma omp parallel for num_threads(threads) schedule(dynamic, 64)
  for (std::ptrdiff_t k = 0; k < count; ++k) {
    const EgoNode& x = nodes_[static_cast<std::size_t>(k)];
    if (!x.leaf()) continue;
    double* l = lo_.data() + static_cast<std::size_t>(k) * d;
    double* h = hi_.data() + static_cast<std::size_t>(k) * d;
    std::copy(row(x.begin), row(x.begin) + d, l);
    std::copy(row(x.begin), row(x.begin) + d, h);
    for (std::uint32_t p = x.begin + 1; p < x.end; ++p)
      for (std::size_t j = 0; j < d; ++j) {
        l[j] = std::min(l[j], row(p)[j]);
        h[j] = std::max(h[j], row(p)[j]);
      }
  }
  // Children come after their parent: backwards, every child's box is ready before its parent's.
  for (std::size_t k = nodes_.size(); k-- > 0;) {
    const EgoNode& x = nodes_[k];
    if (x.leaf()) continue;
    const std::size_t c = static_cast<std::size_t>(x.child);
    for (std::size_t j = 0; j < d; ++j) {
      lo_[k * d + j] = std::min(lo_[c * d + j], lo_[(c + 1) * d + j]);
      hi_[k * d + j] = std::max(hi_[c * d + j], hi_[(c + 1) * d + j]);
    }
  }
}

void EgoIndex::panel_leaves(int threads) {
  const std::size_t d = static_cast<std::size_t>(dim_);
  panel_at_.assign(nodes_.size(), 0);
  std::size_t at = 0;
  for (std::size_t k = 0; k < nodes_.size(); ++k)
    if (nodes_[k].leaf()) {
      panel_at_[k] = at;
      at += panel_doubles(nodes_[k].size(), dim_);
    }
  panels_.assign(at, 0.0);
  const auto count = static_cast<std::ptrdiff_t>(nodes_.size());
#pragma omp parallel for num_threads(threads) schedule(dynamic, 64)
  for (std::ptrdiff_t k = 0; k < count; ++k) {
    const EgoNode& x = nodes_[static_cast<std::size_t>(k)];
    if (!x.leaf()) continue;
    double* panels = panels_.data() + panel_at_[static_cast<std::size_t>(k)];
    for (std::uint32_t t = 0; t < x.size(); ++t)
      for (std::size_t j = 0; j < d; ++j) panels[t / 8 * 8 * d + j * 8 + t % 8] = row(x.begin + t)[j];
  }
}

}  // namespace twobody::cpu
