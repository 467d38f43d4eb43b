// The vector grid's cells and choice (vector_grid_choice.hpp).
#include "twobody/detail/cuda/vector_grid_choice.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <limits>
#include <numeric>

#include "twobody/detail/cpu/dim_stats.hpp"
#include "twobody/detail/cuda/vector_choice.hpp"

namespace twobody::cuda {

namespace {

// D of vector_grid_cells.hpp: above |a_t - b_t| for every pair with key < hi.
double pair_reach(double hi) { return std::sqrt(hi) * (1 + 0x1p-40) + 0x1p-500; }

// Sample rows a side at most: 1024 x 1024 pairs (a self-join half of them), a few ms.
constexpr std::size_t kSampleRows = 1024;

struct SampleRows {
  std::vector<double> x;  // rows x d
  std::size_t n = 0;
};

SampleRows sample_rows(const VectorSet& v) {
  SampleRows s;
  s.n = std::min(v.size(), kSampleRows);
  const std::size_t d = static_cast<std::size_t>(v.dim());
  s.x.resize(s.n * d);
  for (std::size_t t = 0; t < s.n; ++t) v.row_f64(t * v.size() / s.n, s.x.data() + t * d);
  return s;
}

std::vector<std::int64_t> sample_cells(const SampleRows& s, const VectorGridGeometry& g, int d) {
  std::vector<std::int64_t> c(s.n * static_cast<std::size_t>(g.m));
  for (std::size_t r = 0; r < s.n; ++r)
    for (int t = 0; t < g.m; ++t)
      c[r * static_cast<std::size_t>(g.m) + static_cast<std::size_t>(t)] =
          vector_grid_cell(s.x[r * static_cast<std::size_t>(d) + static_cast<std::size_t>(g.dims[t])], g.origin[t],
                           g.width[t], g.cells[t]);
  return c;
}

double pow3(int e) { return std::pow(3.0, e); }

}  // namespace

std::vector<int> vector_grid_order(const cpu::DimStats& stats, double hi, int* split) {
  const int d = static_cast<int>(stats.lo.size());
  const double reach = pair_reach(hi);
  std::vector<int> order(static_cast<std::size_t>(d));
  std::iota(order.begin(), order.end(), 0);
  const auto splits = [&](int k) { return stats.hi[k] - stats.lo[k] >= reach; };
  std::stable_sort(order.begin(), order.end(), [&](int x, int y) {
    if (splits(x) != splits(y)) return splits(x);
    return stats.variance(x) > stats.variance(y);
  });
  if (split) *split = static_cast<int>(std::count_if(order.begin(), order.end(), splits));
  return order;
}

VectorGridGeometry make_vector_grid_geometry(const cpu::DimStats& stats, double hi, int m, const std::vector<int>& order) {
  VectorGridGeometry g;
  g.m = std::clamp(m, 1, std::min(kVectorGridMaxDims, static_cast<int>(order.size())));
  const double reach = pair_reach(hi);
  // The key's 62 bits shared out: each dimension asks for the bits of its cells of the least
  // width, the smallest askers served first, each at most an equal share of what is left; a
  // dimension given fewer gets wider cells (exact still, less pruning).
  int want[kVectorGridMaxDims] = {}, rank[kVectorGridMaxDims] = {};
  double least[kVectorGridMaxDims] = {}, extent[kVectorGridMaxDims] = {};
  for (int t = 0; t < g.m; ++t) {
    const int k = order[static_cast<std::size_t>(t)];
    extent[t] = stats.hi[k] - stats.lo[k];
    least[t] = reach + 0x1p-48 * extent[t];
    const double cells = std::floor(extent[t] / least[t]) + 1;  // (inf / inf: never, least > 0)
    want[t] = 0;
    while (want[t] < 62 && std::ldexp(1.0, want[t]) < cells) ++want[t];
    rank[t] = t;
  }
  std::stable_sort(rank, rank + g.m, [&](int x, int y) { return want[x] < want[y]; });
  int budget = 62;
  for (int r = 0; r < g.m; ++r) {
    const int t = rank[r];
    const int bits = std::min(want[t], budget / (g.m - r));
    budget -= bits;
    const double cap = std::ldexp(1.0, bits);
    const int k = order[static_cast<std::size_t>(t)];
    g.dims[t] = k;
    g.origin[t] = stats.lo[k];
    g.width[t] = std::max(least[t], extent[t] / cap);
    g.cells[t] = static_cast<std::int64_t>(std::min(std::floor(extent[t] / g.width[t]) + 1, cap));
  }
  g.stride[g.m - 1] = 1;
  for (int t = g.m - 1; t > 0; --t) g.stride[t - 1] = g.stride[t] * static_cast<std::uint64_t>(g.cells[t]);
  return g;
}

std::vector<VectorGridEstimate> estimate_vector_grid(const VectorSet& a, const VectorSet* b, const cpu::DimStats& stats,
                                                     double hi, int max_m, const TuningPolicy& policy,
                                                     std::uint64_t* sample_pairs) {
  const int d = a.dim();
  const bool self = b == nullptr;
  const std::vector<int> order = vector_grid_order(stats, hi, nullptr);
  const SampleRows sa = sample_rows(a);
  const SampleRows sb = self ? SampleRows{} : sample_rows(*b);
  const double na = static_cast<double>(a.size()), nb = self ? na : static_cast<double>(b->size());
  const double pairs = self ? na * (na - 1) / 2 : na * nb;
  const double sampled = self ? static_cast<double>(sa.n) * static_cast<double>(sa.n - 1) / 2
                              : static_cast<double>(sa.n) * static_cast<double>(sb.n);
  if (sample_pairs) *sample_pairs = static_cast<std::uint64_t>(sampled);
  std::vector<VectorGridEstimate> out;
  for (int m = 1; m <= max_m; ++m) {
    const VectorGridGeometry g = make_vector_grid_geometry(stats, hi, m, order);
    const std::vector<std::int64_t> ca = sample_cells(sa, g, d);
    const std::vector<std::int64_t> cb = self ? ca : sample_cells(sb, g, d);
    const std::size_t mm = static_cast<std::size_t>(g.m);
    std::uint64_t near = 0, same = 0;
    for (std::size_t r = 0; r < sa.n; ++r) {
      const std::int64_t* x = ca.data() + r * mm;
      for (std::size_t s = self ? r + 1 : 0; s < (self ? sa.n : sb.n); ++s) {
        const std::int64_t* y = cb.data() + s * mm;
        bool is_near = true, is_same = true;
        for (std::size_t t = 0; t < mm && is_near; ++t) {
          const std::int64_t diff = x[t] - y[t];
          is_near = diff >= -1 && diff <= 1;
          is_same = is_same && diff == 0;
        }
        near += is_near;
        same += is_near && is_same;
      }
    }
    VectorGridEstimate e;
    e.m = g.m;
    e.candidate_share = sampled > 0 ? static_cast<double>(near) / sampled : 1.0;
    e.same_cell_share = sampled > 0 ? static_cast<double>(same) / sampled : 1.0;
    e.candidates = e.candidate_share * pairs;
    const double per_chunk = std::clamp(1 + e.same_cell_share * (self ? na - 1 : nb), 1.0, 32.0);
    e.chunks = na / per_chunk;
    e.runs = self ? (pow3(g.m - 1) + 1) / 2 : pow3(g.m - 1);
    e.seconds = e.candidates * policy.grid_pair_factor * fp64_pair_seconds(policy, d) +
                e.chunks * e.runs * policy.grid_lookup_seconds + (na + (self ? 0 : nb)) * policy.grid_row_seconds;
    out.push_back(e);
  }
  return out;
}

VectorGridChoice choose_vector_grid(const VectorPlan& plan, const TuningPolicy& policy, bool tiles) {
  using G = TuningPolicy::VectorGrid;
  VectorGridChoice c;
  const Statistic& s = *plan.stat;
  const int d = plan.a->dim();
  const OutputKind out = s.output();
  c.forced = policy.vector_grid == G::Grid || (policy.vector_grid == G::Auto && plan.path == "grid");
  const std::string by = policy.vector_grid == G::Grid ? "TWOBODY_VECTOR_GRID=grid" : "--path grid";
  if (s.metric != Metric::Euclidean) {
    c.why = "the vector grid prunes Euclidean distances only";
    return c;
  }
  if (out != OutputKind::Reduction && out != OutputKind::PerPoint && out != OutputKind::PairList) {
    c.why = "the vector grid serves the join's outputs (totals, per-vector counts, pairs)";
    return c;
  }
  if (policy.vector_grid == G::Off) {
    c.why = "TWOBODY_VECTOR_GRID=off";
    return c;
  }
  if (policy.vector_grid == G::Auto && plan.path == "brute") {
    c.why = "--path brute";
    return c;
  }
  if (d < 9 || d > 64) {
    c.why = fmt::format("d = {}: the vector grid serves 9 <= d <= 64 (its refine holds a query's row in registers)", d);
    return c;
  }
  if (std::max(plan.a->size(), plan.b->size()) >= (std::size_t(1) << 31)) {
    c.why = "2^31 rows or more";
    return c;
  }
  if (!c.forced && policy.vector_precision != TuningPolicy::VectorPrecision::Auto) {
    c.why = "a precision was requested (an all-pairs kernel)";
    return c;
  }
  const std::uint64_t pairs = pair_total(plan.a->size(), plan.b->size(), plan.is_auto());
  if (!c.forced && static_cast<double>(pairs) < policy.sample_min_pairs) {
    c.why = fmt::format("{} pairs: too few for the vector grid to pay", pairs);
    return c;
  }
  const auto t0 = std::chrono::steady_clock::now();
  const VectorSet* second = plan.is_auto() ? nullptr : plan.b;
  cpu::DimStats stats(d);
  stats.add(*plan.a, plan.threads);
  if (second) stats.add(*second, plan.threads);
  if (!stats.finite) {
    c.why = "values that are not finite (the vector grid's cells need finite rows)";
    return c;
  }
  c.applies = true;
  const double hi = plan.edges.hi();
  int split = 0;
  const std::vector<int> order = vector_grid_order(stats, hi, &split);
  const int max_m = policy.vector_grid_dims ? std::min(policy.vector_grid_dims, d) : std::min({6, d, std::max(1, split)});
  c.estimates = estimate_vector_grid(*plan.a, second, stats, hi, max_m, policy, &c.sample_pairs);
  // The forced dimensions: that m only; else the cheapest.
  const auto best = policy.vector_grid_dims
                        ? c.estimates.end() - 1
                        : std::min_element(c.estimates.begin(), c.estimates.end(),
                                           [](const auto& x, const auto& y) { return x.seconds < y.seconds; });
  c.geometry = make_vector_grid_geometry(stats, hi, best->m, order);
  // The cheapest all-pairs kernel: the float64 kernel, or the Gram tiles at their best (no pair
  // left to settle).
  const double fp64 = static_cast<double>(pairs) * fp64_pair_seconds(policy, d);
  const double gram = static_cast<double>(pairs) * gram_pair_seconds(policy, d);
  const bool gram_cheaper = tiles && gram < fp64;
  const double all_pairs_seconds = gram_cheaper ? gram : fp64;
  const std::string all_pairs_name = gram_cheaper ? "the Gram tiles (unsettled)" : "the float64 kernel";
  c.seconds_grid = best->seconds;
  c.seconds_all_pairs = all_pairs_seconds;
  c.seconds_choosing = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  std::string table;
  for (const auto& e : c.estimates)
    table += fmt::format("{}m = {}: {:.3g} candidates ({:.3g}%), {:.3g} chunks x {:.0f} runs, {:.3g} s", table.empty() ? "" : "; ",
                         e.m, e.candidates, 100 * e.candidate_share, e.chunks, e.runs, e.seconds);
  const std::string estimates = fmt::format(
      "{} of {} dimensions split by cells of eps; on a sample of {} pairs: {} (the cheapest m: {}); sampled in {:.4f} s",
      split, d, c.sample_pairs, table, best->m, c.seconds_choosing);
  if (c.forced) {
    c.use = true;
    c.why = fmt::format("the vector grid (requested: {}): {}", by, estimates);
  } else if (c.seconds_grid < all_pairs_seconds) {
    c.use = true;
    c.why = fmt::format("the vector grid: {:.3g} s < {}'s {:.3g} s; {}", c.seconds_grid, all_pairs_name, all_pairs_seconds,
                        estimates);
  } else {
    c.why = fmt::format("all pairs: the vector grid's {:.3g} s >= {}'s {:.3g} s; {}", c.seconds_grid, all_pairs_name,
                        all_pairs_seconds, estimates);
  }
  return c;
}

std::string describe_vector_grid_geometry(const VectorGridGeometry& g) {
  std::string dims, cells, widths;
  for (int t = 0; t < g.m; ++t) {
    dims += fmt::format("{}{}", t ? ", " : "", g.dims[t]);
    cells += fmt::format("{}{}", t ? " x " : "", g.cells[t]);
    widths += fmt::format("{}{:.6g}", t ? ", " : "", g.width[t]);
  }
  return fmt::format("{} grid dimension{} ({}; cells {}, widths {})", g.m, g.m == 1 ? "" : "s", dims, cells, widths);
}

}  // namespace twobody::cuda
