#include "twobody/detail/engine/pair_jobs.hpp"

#include <fmt/format.h>

#include <omp.h>

#include <algorithm>
#include <cmath>
#include <memory>
#include <numeric>
#include <span>
#include <utility>

#include "twobody/detail/engine/angular_reach.hpp"

namespace twobody::dist {

PointSet SlabChunks::make(const PointSet& p, std::size_t first, std::size_t last, int threads) const {
  const std::size_t n = last - first;
  const int T = threads > 0 ? threads : omp_get_max_threads();
  if (sorted) {
    std::vector<std::span<const double>> columns;
    for (int d = 0; d < sorted->dim(); ++d) columns.push_back(sorted->coord(d).subspan(first, n));
    PointSet out = PointSet::borrow(std::move(columns), sorted);
    if (sorted->has_weights()) {
      const auto w = sorted->weights().subspan(first, n);
      out.set_weights({w.begin(), w.end()});
    }
    if (sorted->has_regions()) {
      const auto r = sorted->regions().subspan(first, n);
      out.set_regions({r.begin(), r.end()});
    }
    return out;
  }
  PointSet out(p.dim(), n);
  const std::uint64_t* at = order.data() + first;
  for (int d = 0; d < p.dim(); ++d) {
    const auto src = p.coord(d);
    auto dst = out.coord(d);
#pragma omp parallel for schedule(static) num_threads(T) if (n > 100000)
    for (std::size_t i = 0; i < n; ++i) dst[i] = src[at[i]];
  }
  if (p.has_weights()) {
    std::vector<double> w(n);
#pragma omp parallel for schedule(static) num_threads(T) if (n > 100000)
    for (std::size_t i = 0; i < n; ++i) w[i] = p.weights()[at[i]];
    out.set_weights(std::move(w));
  }
  if (p.has_regions()) {
    std::vector<std::int32_t> r(n);
#pragma omp parallel for schedule(static) num_threads(T) if (n > 100000)
    for (std::size_t i = 0; i < n; ++i) r[i] = p.regions()[at[i]];
    out.set_regions(std::move(r));
  }
  return out;
}

std::pair<std::size_t, std::size_t> SlabChunks::within(std::size_t c,
                                                       const std::vector<std::pair<double, double>>& intervals) const {
  // The slab's bins are in increasing coordinate and do not overlap: those meeting one interval
  // are a run; the runs of several intervals are joined into their hull.
  std::size_t first = bin_begin[slab_bin[c + 1]], last = bin_begin[slab_bin[c]];
  for (const auto& [l, h] : intervals) {
    std::size_t k0 = slab_bin[c], k1 = slab_bin[c + 1];
    while (k0 < k1 && !(bin_hi[k0] >= l && bin_lo[k0] <= h)) ++k0;
    while (k1 > k0 && !(bin_hi[k1 - 1] >= l && bin_lo[k1 - 1] <= h)) --k1;
    if (k0 == k1) continue;
    first = std::min(first, bin_begin[k0]);
    last = std::max(last, bin_begin[k1]);
  }
  if (first >= last) return {begin[c], begin[c]};
  return {first, last};
}

SlabChunks cut_into_slabs(const PointSet& p, int axis, std::size_t chunks, bool keep_points) {
  SlabChunks s;
  s.axis = axis;
  const std::size_t n = p.size();
  chunks = std::max<std::size_t>(1, std::min(chunks, n));
  const auto x = p.coord(axis);
  // Fine bins: kBinsPerSlab a slab, their inner edges quantiles of a sample taken at fixed
  // indices (so every rank and thread count gets the same edges). A bin holds the keys in
  // [edge[k-1], edge[k]); equal edges (many equal coordinates) leave bins empty.
  constexpr std::size_t kBinsPerSlab = 64;
  const std::size_t bins = std::max<std::size_t>(1, std::min(n, chunks * kBinsPerSlab));
  const std::size_t m = std::min(n, std::max<std::size_t>(bins * 16, 65536));
  std::vector<double> sample(m);
  for (std::size_t i = 0; i < m; ++i) sample[i] = x[(i * n) / m];
  std::sort(sample.begin(), sample.end());
  std::vector<double> edge(bins - 1);
  for (std::size_t k = 1; k < bins; ++k) edge[k - 1] = sample[(k * m) / bins];
  sample = {};
  // std::upper_bound's index (the edges at or below v), without branches: a branchy search of
  // 1 023 edges on random coordinates mispredicts about half its steps (it was the cut's hottest
  // code in a profile; a guide table of buckets in front of it was tried and gained nothing).
  const auto bin_of = [e = edge.data(), size = edge.size()](double v) -> std::size_t {
    if (size == 0) return 0;
    const double* base = e;
    for (std::size_t len = size; len > 1;) {  // (a count of steps fixed by the size: no mispredictions)
      const std::size_t half = len / 2;
      base = base[half] <= v ? base + half : base;
      len -= half;
    }
    return static_cast<std::size_t>(base - e) + (*base <= v ? 1 : 0);
  };

  // A stable counting sort by bin over fixed blocks of indices: block t's points of bin k go after
  // every earlier block's, so the order does not depend on how many threads ran the blocks.
  const std::size_t blocks = n > 100000 ? std::min<std::size_t>(256, n / 16384) : 1;
  std::vector<std::size_t> count(blocks * bins, 0);
  std::vector<double> lo(blocks * bins, HUGE_VAL), hi(blocks * bins, -HUGE_VAL);
  // Each point's bin, found once here and read again by the order pass.
  // (Default-initialised, in huge pages: DefaultInitAllocator. Zeroed on one thread, or faulted
  // in 4 KiB at a time, the cut's arrays cost more than its passes.)
  std::vector<std::uint32_t, DefaultInitAllocator<std::uint32_t>> bin_of_point(n);
#pragma omp parallel for schedule(dynamic) if (blocks > 1)
  for (std::size_t t = 0; t < blocks; ++t) {
    std::size_t* c = count.data() + t * bins;
    double* l = lo.data() + t * bins;
    double* h = hi.data() + t * bins;
    for (std::size_t i = n * t / blocks; i < n * (t + 1) / blocks; ++i) {
      const std::size_t k = bin_of(x[i]);
      bin_of_point[i] = static_cast<std::uint32_t>(k);
      ++c[k];
      l[k] = std::min(l[k], x[i]);
      h[k] = std::max(h[k], x[i]);
    }
  }
  s.bin_begin.assign(bins + 1, 0);
  s.bin_lo.assign(bins, HUGE_VAL);
  s.bin_hi.assign(bins, -HUGE_VAL);
  std::size_t at = 0;
  for (std::size_t k = 0; k < bins; ++k) {
    s.bin_begin[k] = at;
    for (std::size_t t = 0; t < blocks; ++t) {
      const std::size_t c = count[t * bins + k];
      count[t * bins + k] = at;  // now block t's first position in bin k
      at += c;
      s.bin_lo[k] = std::min(s.bin_lo[k], lo[t * bins + k]);
      s.bin_hi[k] = std::max(s.bin_hi[k], hi[t * bins + k]);
    }
  }
  s.bin_begin[bins] = n;
  lo = {};
  hi = {};

  // Slabs: runs of bins cut where the running count first reaches n c / chunks; a cut that would
  // leave a slab empty (one bin holding more than a slab's share) is skipped.
  s.slab_bin = {0};
  s.begin = {0};
  for (std::size_t k = 0, c = 1; k < bins && c < chunks; ++k) {
    const std::size_t end = s.bin_begin[k + 1];
    if (end < n * c / chunks || end == s.begin.back() || end == n) continue;
    s.slab_bin.push_back(k + 1);
    s.begin.push_back(end);
    while (c < chunks && n * c / chunks <= end) ++c;
  }
  s.slab_bin.push_back(bins);
  s.begin.push_back(n);
  const std::size_t slabs = s.begin.size() - 1;
  std::vector<std::uint32_t> slab_of_bin(bins);
  for (std::size_t c = 0; c < slabs; ++c)
    for (std::size_t k = s.slab_bin[c]; k < s.slab_bin[c + 1]; ++k) slab_of_bin[k] = static_cast<std::uint32_t>(c);

  // The order, and each slab's bounding box from the same pass over the points in their own order
  // (block t's boxes, joined after). (Until 2026-11-28 the boxes were taken through the order, a
  // random read a point and coordinate on one thread a slab and axis: ~9 s of a 10^9-point cut.)
  const int D = p.dim();
  std::vector<const double*> column(D);
  for (int d = 0; d < D; ++d) column[d] = p.coord(d).data();
  std::vector<double> box_lo(blocks * slabs * D, HUGE_VAL), box_hi(blocks * slabs * D, -HUGE_VAL);
  s.order.resize(n);
  // The points in position order, written in the same pass: a slab or halo is then a contiguous
  // run of them (SlabChunks::make borrows it) instead of a gather through the order, a random
  // read of a cache line a coordinate.
  // Its columns are default-initialised arrays (first touched by the pass's threads) that the set
  // borrows: a PointSet of its own would zero 24 GB on one thread for 10^9 points.
  using Column = std::vector<double, DefaultInitAllocator<double>>;
  std::vector<double*> out(D, nullptr);
  std::shared_ptr<std::vector<Column>> columns_kept;
  std::vector<double> weights(keep_points && p.has_weights() ? n : 0);
  std::vector<std::int32_t> regions(keep_points && p.has_regions() ? n : 0);
  if (keep_points) {
    columns_kept = std::make_shared<std::vector<Column>>(D);
    for (int d = 0; d < D; ++d) {
      (*columns_kept)[d].resize(n);
      out[d] = (*columns_kept)[d].data();
    }
  }
  const double* w_in = p.has_weights() ? p.weights().data() : nullptr;
  const std::int32_t* r_in = p.has_regions() ? p.regions().data() : nullptr;
#pragma omp parallel for schedule(dynamic) if (blocks > 1)
  for (std::size_t t = 0; t < blocks; ++t) {
    std::size_t* next = count.data() + t * bins;
    double* l = box_lo.data() + t * slabs * D;
    double* h = box_hi.data() + t * slabs * D;
    for (std::size_t i = n * t / blocks; i < n * (t + 1) / blocks; ++i) {
      const std::uint32_t k = bin_of_point[i];
      const std::size_t at = next[k]++;
      s.order[at] = i;
      const std::size_t c = slab_of_bin[k];
      for (int d = 0; d < D; ++d) {
        const double v = column[d][i];
        l[c * D + d] = std::min(l[c * D + d], v);
        h[c * D + d] = std::max(h[c * D + d], v);
        if (keep_points) out[d][at] = v;
      }
      if (!weights.empty()) weights[at] = w_in[i];
      if (!regions.empty()) regions[at] = r_in[i];
    }
  }
  bin_of_point = {};
  if (keep_points) {
    std::vector<std::span<const double>> spans;
    for (int d = 0; d < D; ++d) spans.emplace_back(out[d], n);
    auto sorted = std::make_shared<PointSet>(PointSet::borrow(std::move(spans), std::move(columns_kept)));
    if (!weights.empty()) sorted->set_weights(std::move(weights));
    if (!regions.empty()) sorted->set_regions(std::move(regions));
    s.sorted = std::move(sorted);
  }
  s.lo.assign(slabs, std::vector<double>(D, HUGE_VAL));
  s.hi.assign(slabs, std::vector<double>(D, -HUGE_VAL));
  for (std::size_t t = 0; t < blocks; ++t)
    for (std::size_t c = 0; c < slabs; ++c)
      for (int d = 0; d < D; ++d) {
        s.lo[c][d] = std::min(s.lo[c][d], box_lo[(t * slabs + c) * D + d]);
        s.hi[c][d] = std::max(s.hi[c][d], box_hi[(t * slabs + c) * D + d]);
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

// The positions of slab p of `x` that can pair with a point whose slab-axis coordinate lies in
// [lo, hi]: those within `reach` of it along the axis (a pair's separation along one axis is at
// most its distance; with the periodic images). `trim` false: the whole slab. The margin is in
// `reach`; the interval ends are rounded, but a coordinate at or beyond an exact end is at or
// beyond its rounded value (rounding is monotone), so no point that can pair is left out.
std::pair<std::size_t, std::size_t> halo(const Statistic& s, const SlabChunks& x, std::size_t p, double lo, double hi,
                                         double reach, bool trim) {
  if (!trim) return {x.begin[p], x.begin[p + 1]};
  std::vector<std::pair<double, double>> around = {{lo - reach, hi + reach}};
  if (s.metric == Metric::Periodic) {
    const double L = s.box.length[x.axis];
    around.push_back({lo - reach + L, hi + reach + L});
    around.push_back({lo - reach - L, hi + reach - L});
  }
  return x.within(p, around);
}

}  // namespace

Decomposition decompose(const Statistic& s, const PointSet& a, const PointSet* b, int ranks, int chunks_per_rank,
                        bool keep_points) {
  Decomposition D;
  D.cross = b != nullptr;
  D.reach = statistic_reach(s);
  if (s.metric == Metric::Angular && std::isfinite(D.reach)) {
    // The chord of θ_max is exact only for exact unit vectors and an exact dot product: the
    // proven bound of angular_reach.hpp (the rule's rounding, the points' norms) instead, at the
    // last key edge −cos θ_max (or the next double: a closed range) with room for cos's rounding.
    const double key_hi = -std::cos(s.binning().hi() * (M_PI / 180)) + 0x1p-50;
    D.reach = std::max(D.reach, angular_reach(key_hi, a, b ? *b : a, omp_get_max_threads()).chord);
  }
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
  D.a = cut_into_slabs(a, axis, chunks, keep_points);
  if (b) D.b = cut_into_slabs(*b, axis, chunks, keep_points);
  const SlabChunks& B = b ? D.b : D.a;
  // A pair at the reach itself is not counted (bins are [lo, hi)); the margin covers rounding.
  const double skip_beyond = D.reach * (1 + 1e-9);
  // Cross jobs read only their halos when the reach is finite and the images along the slab axis
  // are the three nearest (a triclinic cell's are not along one Cartesian axis: whole slabs).
  const bool periodic = s.metric == Metric::Periodic;
  D.halos = std::isfinite(D.reach) && !(periodic && s.box.triclinic()) &&
            !(periodic && !(widest <= s.box.length[axis]));
  const int x = axis;
  for (std::size_t p = 0; p < D.a.chunks(); ++p)
    for (std::size_t q = b ? 0 : p; q < B.chunks(); ++q) {
      PairJob j;
      j.a = p;
      j.b = q;
      j.is_auto = !b && p == q;
      if (j.is_auto) {
        const double n = static_cast<double>(D.a.size(p));
        j.estimate = 0.5 * n * (n - 1);
        j.a_first = j.b_first = D.a.begin[p];
        j.a_last = j.b_last = D.a.begin[p + 1];
      } else {
        if (chunk_gap(s, D.a, p, B, q) > skip_beyond) {
          ++D.dropped;
          continue;
        }
        std::tie(j.a_first, j.a_last) = halo(s, D.a, p, B.lo[q][x], B.hi[q][x], skip_beyond, D.halos);
        std::tie(j.b_first, j.b_last) = halo(s, B, q, D.a.lo[p][x], D.a.hi[p][x], skip_beyond, D.halos);
        if (j.a_first == j.a_last || j.b_first == j.b_last) {
          ++D.dropped;
          continue;
        }
        j.estimate = static_cast<double>(j.a_last - j.a_first) * static_cast<double>(j.b_last - j.b_first);
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

std::string Decomposition::halo_text() const {
  if (!halos) return "";
  const SlabChunks& second = cross ? b : a;
  double read = 0, whole = 0;
  for (const PairJob& j : jobs) {
    if (j.is_auto) continue;
    read += static_cast<double>(j.a_last - j.a_first + j.b_last - j.b_first);
    whole += static_cast<double>(a.size(j.a) + second.size(j.b));
  }
  if (whole == 0) return "";
  return fmt::format(", each reading only the points within the reach of the other slab: {:.1f}% of their slabs",
                     100 * read / whole);
}

std::string Decomposition::describe_cut(const std::string& prefix) const {
  return fmt::format(
      "{}{} cut into {} slabs along axis {} (about equal counts, cut between bins at sampled quantiles of that "
      "coordinate){}; {} pair jobs ({} auto, {} cross{}){}",
      prefix, cross ? "each set" : "the set", a.chunks(), a.axis,
      cross ? fmt::format(" ({} and {})", a.chunks(), b.chunks()) : "", jobs.size(),
      std::count_if(jobs.begin(), jobs.end(), [](const PairJob& j) { return j.is_auto; }),
      std::count_if(jobs.begin(), jobs.end(), [](const PairJob& j) { return !j.is_auto; }), halo_text(),
      dropped ? fmt::format(", {} more dropped: their slabs lie beyond the reach {:.6g}", dropped, reach) : "");
}

}  // namespace twobody::dist
