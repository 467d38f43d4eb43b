#include "twobody/detail/engine/exact_sums.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <utility>

#include "twobody/error.hpp"

namespace twobody {

namespace {

double largest_weight(const PointSet& p) {
  double m = 0;
  for (double w : p.weights()) m = std::max(m, std::abs(w));
  return m;
}

// The largest |natural value| a binned pair can have: the outer edges (twice, for the rounding
// of a value recovered from its key).
double separation_bound(const Statistic& s) {
  double m = 0;
  if (const auto* h = std::get_if<reduce::Histogram>(&s.reduction))
    m = std::max(std::abs(h->bins.edges().front()), std::abs(h->bins.edges().back()));
  else if (const auto* h2 = std::get_if<reduce::Histogram2D>(&s.reduction))
    m = h2->bins.cutoff();
  return 2 * m;
}

SumGrid grid(double bound, const char* what) {
  if (!std::isfinite(bound))
    throw_input(fmt::format("{} overflow float64 (weights of magnitude beyond about 1e154?): their sums "
                            "cannot be formed", what));
  return SumGrid::for_bound(bound);
}

std::vector<FixedSum> on_grid(const std::vector<double>& v, const SumGrid& g) {
  std::vector<FixedSum> out(v.size());
  for (std::size_t k = 0; k < v.size(); ++k)
    out[k] = static_cast<FixedSum>(std::nearbyint(v[k] * g.inverse_step * g.inverse_step2));
  return out;
}

void rounded(std::vector<double>& to, const std::vector<FixedSum>& from, const SumGrid& g) {
  if (from.empty()) return;
  to.resize(from.size());
  for (std::size_t k = 0; k < from.size(); ++k) to[k] = g.value(from[k]);
}

// Per point rows of `cols`: the last column (the energy) on `last`, the others on `g`.
void rounded_rows(std::vector<double>& to, const std::vector<WideSum>& from, std::size_t cols, const SumGrid& g,
                  const SumGrid& last) {
  if (from.empty() || cols == 0) return;
  to.resize(from.size());
  for (std::size_t k = 0; k < from.size(); ++k) to[k] = from[k].value((k % cols == cols - 1 ? last : g).exponent);
}

}  // namespace

SumGrids sum_grids_for(const Statistic& s, const PointSet& a, const PointSet* b) {
  SumGrids g;
  const double wa = s.weighted ? largest_weight(a) : 1.0;
  const double wb = !s.weighted ? 1.0 : b ? largest_weight(*b) : wa;
  const double pair = wa * wb;
  g.pair_weight = grid(pair, "products of two weights");
  g.point_weight = grid(std::max(wa, wb), "weights");
  g.separation = grid(pair * separation_bound(s), "weighted separations");
  // |log s| <= 709 for every s a pair can have (zero is summed as the smallest normal number).
  g.log_separation = grid(pair * 710.0, "weighted log-separations");
  if (const auto* f = std::get_if<reduce::PointSums>(&s.reduction)) {
    // 62 bits of every term of the pairs at `fine` or beyond; the closest pair's terms in the wide
    // sums' 190 bits above the same grid (with 2^40 of them).
    if (!(f->closest > 0))
      throw_config(fmt::format("point sums need the closest separation (> 0) of the pairs within the cutoff, not {}",
                               f->closest));
    const double charge = std::max(wa, wb);
    const PairTermBounds t = pair_term_bounds(f->force, f->range.hi(), std::max(f->fine, f->closest), charge);
    const PairTermBounds top = pair_term_bounds(f->force, f->range.hi(), f->closest, charge);
    const char* what = "the pair forces at the closest separation";
    g.force = grid(t.force, what);
    g.energy = grid(t.half_energy, what);
    g.virial = grid(t.virial, what);
    const std::pair<SumGrid, double> widest[] = {{g.force, top.force}, {g.energy, top.half_energy}, {g.virial, top.virial}};
    for (const auto& [grid_of, largest] : widest)
      if (!std::isfinite(largest) || std::ilogb(largest) - grid_of.exponent > 148)
        throw_input(fmt::format("the closest pair's forces ({:.3g} at a separation of {:.3g}) are beyond 2^150 steps of the "
                                "grid the other pairs need: overlapping bodies", largest, f->closest));
  }
  return g;
}

void round_exact_sums(Result& r) {
  const SumGrids& g = r.exact.grids;
  rounded(r.weighted, r.exact.weighted, g.pair_weight);
  rounded(r.region_weighted, r.exact.region_weighted, g.pair_weight);
  rounded(r.separation_sum, r.exact.separation_sum, g.separation);
  rounded(r.log_separation_sum, r.exact.log_separation_sum, g.log_separation);
  rounded(r.per_point_a.weighted, r.exact.point_weighted_a, g.point_weight);
  rounded(r.per_point_b.weighted, r.exact.point_weighted_b, g.point_weight);
  rounded(r.value_sum, r.exact.value_sum, g.value);
  rounded(r.per_point_a.values, r.exact.point_value_a, g.value);
  rounded(r.per_point_b.values, r.exact.point_value_b, g.value);
  rounded_rows(r.per_point_a.sums, r.exact.point_sums_a, r.per_point_a.components, g.force, g.energy);
  rounded_rows(r.per_point_b.sums, r.exact.point_sums_b, r.per_point_b.components, g.force, g.energy);
  if (r.exact.totals.size() == 2) {
    r.totals = {r.exact.totals[0].value(g.energy.exponent), r.exact.totals[1].value(g.virial.exponent)};
  }
}

void exact_from_float64(Result& r, const SumGrids& g) {
  r.exact.grids = g;
  const auto fill = [](std::vector<FixedSum>& exact, const std::vector<double>& v, const SumGrid& grid) {
    if (exact.size() != v.size()) exact = on_grid(v, grid);
  };
  fill(r.exact.weighted, r.weighted, g.pair_weight);
  fill(r.exact.region_weighted, r.region_weighted, g.pair_weight);
  fill(r.exact.separation_sum, r.separation_sum, g.separation);
  fill(r.exact.log_separation_sum, r.log_separation_sum, g.log_separation);
  fill(r.exact.point_weighted_a, r.per_point_a.weighted, g.point_weight);
  fill(r.exact.point_weighted_b, r.per_point_b.weighted, g.point_weight);
}

}  // namespace twobody
