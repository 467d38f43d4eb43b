#include "twobody/detail/engine/pair_jobs.hpp"

#include <fmt/format.h>

#include <parallel/algorithm>

#include <algorithm>
#include <cmath>
#include <numeric>
#include <utility>

namespace twobody::dist {

PointSet SlabChunks::make(const PointSet& p, std::size_t c) const {
  const std::size_t n = size(c), first = begin[c];
  PointSet out(p.dim(), n);
  for (int d = 0; d < p.dim(); ++d) {
    const auto src = p.coord(d);
    auto dst = out.coord(d);
    for (std::size_t i = 0; i < n; ++i) dst[i] = src[order[first + i]];
  }
  if (p.has_weights()) {
    std::vector<double> w(n);
    for (std::size_t i = 0; i < n; ++i) w[i] = p.weights()[order[first + i]];
    out.set_weights(std::move(w));
  }
  if (p.has_regions()) {
    std::vector<std::int32_t> r(n);
    for (std::size_t i = 0; i < n; ++i) r[i] = p.regions()[order[first + i]];
    out.set_regions(std::move(r));
  }
  return out;
}

std::size_t SlabChunks::count_within(std::size_t c, double l, double h) const {
  const auto first = key.begin() + static_cast<std::ptrdiff_t>(begin[c]);
  const auto last = key.begin() + static_cast<std::ptrdiff_t>(begin[c + 1]);
  return static_cast<std::size_t>(std::upper_bound(first, last, h) - std::lower_bound(first, last, l));
}

SlabChunks cut_into_slabs(const PointSet& p, int axis, std::size_t chunks) {
  SlabChunks s;
  s.axis = axis;
  const std::size_t n = p.size();
  chunks = std::max<std::size_t>(1, std::min(chunks, n));
  // (coordinate, index) pairs sorted in parallel (libstdc++'s OpenMP sort): the order is unique,
  // indices being distinct, so every rank and every thread count gets the same slabs.
  std::vector<std::pair<double, std::uint64_t>> by_key(n);
  const auto x = p.coord(axis);
#pragma omp parallel for schedule(static) if (n > 100000)
  for (std::size_t i = 0; i < n; ++i) by_key[i] = {x[i], i};
  __gnu_parallel::sort(by_key.begin(), by_key.end());
  s.order.resize(n);
  s.key.resize(n);
#pragma omp parallel for schedule(static) if (n > 100000)
  for (std::size_t i = 0; i < n; ++i) {
    s.key[i] = by_key[i].first;
    s.order[i] = by_key[i].second;
  }
  by_key = {};
  s.begin.resize(chunks + 1);
  for (std::size_t c = 0; c <= chunks; ++c) s.begin[c] = n * c / chunks;
  s.lo.assign(chunks, std::vector<double>(p.dim(), HUGE_VAL));
  s.hi.assign(chunks, std::vector<double>(p.dim(), -HUGE_VAL));
#pragma omp parallel for schedule(dynamic) if (n > 100000)
  for (std::size_t c = 0; c < chunks; ++c)
    for (int d = 0; d < p.dim(); ++d) {
      const auto v = p.coord(d);
      for (std::size_t i = s.begin[c]; i < s.begin[c + 1]; ++i) {
        s.lo[c][d] = std::min(s.lo[c][d], v[s.order[i]]);
        s.hi[c][d] = std::max(s.hi[c][d], v[s.order[i]]);
      }
    }
  return s;
}

double statistic_reach(const Statistic& s) {
  constexpr double inf = std::numeric_limits<double>::infinity();
  if (s.output() == OutputKind::Matrix) return inf;
  if (s.binning2d().active()) return s.binning2d().cutoff();
  if (s.binning().nbins() == 0) return inf;
  const double h = s.binning().hi();
  if (s.metric == Metric::Angular) {
    if (h >= 180) return inf;
    return 2 * std::sin(0.5 * h * (M_PI / 180));
  }
  return h;
}

namespace {

// A lower bound of the separation of any point of chunk p of `x` and any of chunk q of `y`: the
// gap between their bounding boxes, or for a periodic box the minimum-image gap along the slab
// axis (the other axes span the box anyway).
double chunk_gap(const Statistic& s, const SlabChunks& x, std::size_t p, const SlabChunks& y, std::size_t q) {
  const auto gap1 = [](double lo1, double hi1, double lo2, double hi2) {
    return std::max(0.0, std::max(lo2 - hi1, lo1 - hi2));
  };
  // (Slabs of Cartesian coordinates are not the periodicity of a triclinic cell: no gap is known,
  // and every chunk pair is a job; the pair function finds the minimum image.)
  if (s.metric == Metric::Periodic && s.box.triclinic()) return 0.0;
  if (s.metric == Metric::Periodic) {
    const int d = x.axis;
    const double L = s.box.length[d];
    const double direct = gap1(x.lo[p][d], x.hi[p][d], y.lo[q][d], y.hi[q][d]);
    const double wrapped = std::max(0.0, L - (std::max(x.hi[p][d], y.hi[q][d]) - std::min(x.lo[p][d], y.lo[q][d])));
    return std::min(direct, wrapped);
  }
  double g2 = 0;
  for (std::size_t d = 0; d < x.lo[p].size(); ++d) {
    const double g = gap1(x.lo[p][d], x.hi[p][d], y.lo[q][d], y.hi[q][d]);
    g2 += g * g;
  }
  return std::sqrt(g2);
}

// Points of chunk p within `reach` of chunk q along the slab axis (with the periodic images): the
// part of p that can pair with q.
double reachable(const Statistic& s, const SlabChunks& x, std::size_t p, const SlabChunks& y, std::size_t q,
                 double reach) {
  if (!std::isfinite(reach) || (s.metric == Metric::Periodic && s.box.triclinic())) return static_cast<double>(x.size(p));
  const int d = x.axis;
  const double lo = y.lo[q][d] - reach, hi = y.hi[q][d] + reach;
  std::size_t n = x.count_within(p, lo, hi);
  if (s.metric == Metric::Periodic) {
    const double L = s.box.length[d];
    n += x.count_within(p, lo + L, hi + L) + x.count_within(p, lo - L, hi - L);
  }
  return static_cast<double>(std::min(n, x.size(p)));
}

}  // namespace

Decomposition decompose(const Statistic& s, const PointSet& a, const PointSet* b, int ranks, int chunks_per_rank) {
  Decomposition D;
  D.cross = b != nullptr;
  D.reach = statistic_reach(s);
  // Slabs across the widest extent of both sets.
  int axis = 0;
  double widest = -1;
  for (int d = 0; d < a.dim(); ++d) {
    const auto [lo, hi] = joint_range(a, b ? *b : a, d);
    if (hi - lo > widest) {
      widest = hi - lo;
      axis = d;
    }
  }
  const std::size_t chunks = static_cast<std::size_t>(std::max(1, ranks) * std::max(1, chunks_per_rank));
  D.a = cut_into_slabs(a, axis, chunks);
  if (b) D.b = cut_into_slabs(*b, axis, chunks);
  const SlabChunks& B = b ? D.b : D.a;
  // A pair at the reach itself is not counted (bins are [lo, hi)); the margin covers rounding.
  const double skip_beyond = D.reach * (1 + 1e-9);
  for (std::size_t p = 0; p < D.a.chunks(); ++p)
    for (std::size_t q = b ? 0 : p; q < B.chunks(); ++q) {
      PairJob j;
      j.a = p;
      j.b = q;
      j.is_auto = !b && p == q;
      if (j.is_auto) {
        const double n = static_cast<double>(D.a.size(p));
        j.estimate = 0.5 * n * (n - 1);
      } else {
        if (chunk_gap(s, D.a, p, B, q) > skip_beyond) {
          ++D.dropped;
          continue;
        }
        j.estimate = reachable(s, D.a, p, B, q, D.reach) * reachable(s, B, q, D.a, p, D.reach);
      }
      D.jobs.push_back(j);
    }
  // Longest first to the least loaded rank (ties: the lower job, the lower rank).
  D.load.assign(static_cast<std::size_t>(std::max(1, ranks)), 0.0);
  for (std::size_t k : D.longest_first()) {
    const auto least = std::min_element(D.load.begin(), D.load.end()) - D.load.begin();
    D.jobs[k].rank = static_cast<int>(least);
    D.load[least] += D.jobs[k].estimate;
  }
  return D;
}

std::vector<std::size_t> Decomposition::longest_first() const {
  std::vector<std::size_t> by_size(jobs.size());
  std::iota(by_size.begin(), by_size.end(), std::size_t{0});
  std::stable_sort(by_size.begin(), by_size.end(),
                   [&](std::size_t x, std::size_t y) { return jobs[x].estimate > jobs[y].estimate; });
  return by_size;
}

std::string Decomposition::describe_cut(const std::string& prefix) const {
  return fmt::format(
      "{}{} cut into {} slabs along axis {} (equal counts, sorted by that coordinate){}; {} pair jobs ({} auto, {} "
      "cross){}",
      prefix, cross ? "each set" : "the set", a.chunks(), a.axis,
      cross ? fmt::format(" ({} and {})", a.chunks(), b.chunks()) : "", jobs.size(),
      std::count_if(jobs.begin(), jobs.end(), [](const PairJob& j) { return j.is_auto; }),
      std::count_if(jobs.begin(), jobs.end(), [](const PairJob& j) { return !j.is_auto; }),
      dropped ? fmt::format(", {} more dropped: their slabs lie beyond the reach {:.6g}", dropped, reach) : "");
}

}  // namespace twobody::dist
