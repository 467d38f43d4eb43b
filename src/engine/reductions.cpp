#include "twobody/detail/engine/reductions.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <utility>

#include "twobody/detail/engine/overloaded.hpp"
#include "twobody/error.hpp"

namespace twobody {

namespace {

// Jackknife labels: every point of both sets labelled, each label in [0, R).
void check_regions(int regions, const PointSet& a, const PointSet* b) {
  if (regions < 0) throw_config(fmt::format("the number of jackknife regions is negative ({})", regions));
  if (regions == 0) return;
  const auto check = [&](const PointSet& p, const char* which) {
    if (!p.has_regions())
      throw_config(fmt::format("{}a statistic with {} jackknife regions needs a region label for every point",
                               which, regions));
    const auto r = p.regions();
    for (std::size_t i = 0; i < r.size(); ++i)
      if (r[i] < 0 || r[i] >= regions)
        throw_input(fmt::format("{}point {} has region label {}, outside [0, {})", which, i + 1, r[i], regions));
  };
  check(a, b ? "first set: " : "");
  if (b) check(*b, "second set: ");
}

// to[offset + k] += from[k], `to` grown to fit.
template <class T>
void add_into(std::vector<T>& to, const std::vector<T>& from, std::size_t offset = 0) {
  if (from.empty()) return;
  if (to.size() < offset + from.size()) to.resize(offset + from.size());
  for (std::size_t k = 0; k < from.size(); ++k) to[offset + k] += from[k];
}

// to[where.at(k)] += from[k], `to` grown to fit.
template <class T>
void add_placed(std::vector<T>& to, const std::vector<T>& from, const PointPlacement& where) {
  if (from.empty()) return;
  if (!where.order) return add_into(to, from, where.offset);
  for (std::size_t k = 0; k < from.size(); ++k) {
    const std::size_t at = where.at(k);
    if (to.size() <= at) to.resize(at + 1);
    to[at] += from[k];
  }
}

// Rows of `cols` values: to row where.at(k) += from row k, `to` grown to fit.
template <class T>
void add_placed_rows(std::vector<T>& to, const std::vector<T>& from, const PointPlacement& where, std::size_t cols) {
  if (from.empty() || cols == 0) return;
  for (std::size_t k = 0; k < from.size() / cols; ++k) {
    const std::size_t at = where.at(k);
    if (to.size() < (at + 1) * cols) to.resize((at + 1) * cols);
    for (std::size_t c = 0; c < cols; ++c) to[at * cols + c] += from[k * cols + c];
  }
}

void merge_counters(Result& whole, const Result& piece) {
  add_into(whole.counts, piece.counts);
  add_into(whole.weighted, piece.weighted);
  whole.regions = std::max(whole.regions, piece.regions);
  add_into(whole.region_counts, piece.region_counts);
  add_into(whole.region_weighted, piece.region_weighted);
  add_into(whole.separation_sum, piece.separation_sum);
  add_into(whole.log_separation_sum, piece.log_separation_sum);
  add_into(whole.value_sum, piece.value_sum);
  // The exact sums are what count (the float64 sums above are rounded from them at the end).
  whole.exact.grids = piece.exact.grids;
  add_into(whole.exact.weighted, piece.exact.weighted);
  add_into(whole.exact.region_weighted, piece.exact.region_weighted);
  add_into(whole.exact.separation_sum, piece.exact.separation_sum);
  add_into(whole.exact.log_separation_sum, piece.exact.log_separation_sum);
  add_into(whole.exact.value_sum, piece.exact.value_sum);
  add_into(whole.exact.totals, piece.exact.totals);
}

// Forces: a cutoff from 0, a metric with a displacement (open or orthorhombic periodic), the
// potential's parameters, charges for Coulomb.
void check_point_sums(const Statistic& s, const reduce::PointSums& p, int dim) {
  if (dim < 1 || dim > 3) throw_config(fmt::format("forces take 1-, 2- or 3-D points, not {}-D", dim));
  const double c = p.range.hi();
  if (p.range.nbins() != 1 || p.range.lo() != 0.0 || !(c > 0) || !std::isfinite(c))
    throw_config(fmt::format("forces take one range [0, cutoff) with a finite cutoff > 0, not [{}, {}) in {} bins",
                             p.range.lo(), c, p.range.nbins()));
  if (s.metric != Metric::Euclidean && s.metric != Metric::Periodic)
    throw_config(fmt::format("forces need Cartesian points, open or in a periodic box, not the {} metric", to_string(s.metric)));
  if (s.metric == Metric::Periodic && s.box.triclinic())
    throw_config("forces take an orthorhombic box (sides L_x, L_y, L_z): a triclinic cell is not supported");
  if (s.metric == Metric::Periodic && c > 0.5 * s.box.min_length())
    throw_config(fmt::format("the cutoff {} exceeds half the periodic box ({}): the minimum image is only unique up to L/2",
                             c, 0.5 * s.box.min_length()));
  const PairForce& f = p.force;
  if (f.potential == PairPotential::LennardJones) {
    if (!(f.sigma > 0) || !std::isfinite(f.sigma) || !std::isfinite(f.epsilon))
      throw_config(fmt::format("Lennard-Jones needs a finite sigma > 0 and a finite epsilon (sigma {}, epsilon {})", f.sigma,
                               f.epsilon));
    if (s.weighted) throw_config("Lennard-Jones forces take no weights (charges are Coulomb's)");
  } else if (!s.weighted) {
    throw_config("Coulomb forces need a charge for every point (the points' weights: --charge-column)");
  }
  if (!(p.closest > 0) || !std::isfinite(p.closest))
    throw_config(fmt::format("forces need the closest separation (> 0) of the pairs within the cutoff, not {}", p.closest));
}

}  // namespace

void refuse_value_reductions(const Statistic& s) {
  if (std::holds_alternative<reduce::Sum>(s.reduction) || std::holds_alternative<reduce::PerPointValue>(s.reduction))
    throw_config("sums of values reduce a pair expression's values (run_expression, twobody custom); a built-in "
                 "metric's statistics count pairs");
}

void validate_reduction(const Statistic& s, const PointSet& a, const PointSet* b) {
  refuse_value_reductions(s);
  std::visit(Overloaded{[&](const reduce::Histogram& h) { check_regions(h.regions, a, b); },
                        [&](const reduce::Histogram2D& h) { check_regions(h.regions, a, b); },
                        [&](const reduce::PointSums& p) { check_point_sums(s, p, a.dim()); },
                        [](const auto&) {}},
             s.reduction);
}

Result empty_result(const Statistic& s, std::size_t n_a, std::size_t n_b) {
  Result r;
  r.output = s.output();
  const std::size_t w = s.weighted ? 1 : 0;
  const auto histogram = [&](std::size_t nbins, int regions, bool means) {
    r.counts.assign(nbins, 0);
    r.weighted.assign(w * nbins, 0.0);
    r.exact.weighted.assign(w * nbins, 0);
    r.regions = static_cast<std::size_t>(regions);
    r.region_counts.assign(r.regions * nbins, 0);
    r.region_weighted.assign(w * r.regions * nbins, 0.0);
    r.exact.region_weighted.assign(w * r.regions * nbins, 0);
    if (means) {
      r.separation_sum.assign(nbins, 0.0);
      r.log_separation_sum.assign(nbins, 0.0);
      r.exact.separation_sum.assign(nbins, 0);
      r.exact.log_separation_sum.assign(nbins, 0);
    }
  };
  const auto per_point = [&](PointReductions& p, std::vector<FixedSum>& exact, std::size_t n) {
    p.counts.assign(n, 0);
    p.weighted.assign(w * n, 0.0);
    exact.assign(w * n, 0);
  };
  std::visit(Overloaded{[&](const reduce::Count&) { histogram(1, 0, false); },
                        [&](const reduce::Histogram& h) { histogram(h.bins.nbins(), h.regions, h.mean_separation); },
                        [&](const reduce::Histogram2D& h) { histogram(h.bins.nbins(), h.regions, h.mean_separation); },
                        [&](const reduce::PerPoint&) {
                          per_point(r.per_point_a, r.exact.point_weighted_a, n_a);
                          if (n_b) per_point(r.per_point_b, r.exact.point_weighted_b, n_b);
                        },
                        [&](const reduce::PointSums&) {
                          // The sums' width (the points' dimension + 1) comes with the first piece.
                          r.per_point_a.counts.assign(n_a, 0);
                          if (n_b) r.per_point_b.counts.assign(n_b, 0);
                          r.totals.assign(2, 0.0);
                          r.exact.totals.assign(2, WideSum{});
                        },
                        [&](const reduce::Matrix&) {
                          r.rows = n_a;
                          r.cols = n_b ? n_b : n_a;
                          r.matrix.assign(r.rows * r.cols, 0.0);
                        },
                        [&](const reduce::Nearest& n) {
                          const std::size_t k = n.k > 0 ? static_cast<std::size_t>(n.k) : 0;
                          r.nearest.k = n.k;
                          r.nearest.index.assign(n_a * k, 0);
                          r.nearest.key.assign(n_a * k, 0.0);
                          r.nearest.value.assign(n_a * k, 0.0);
                        },
                        [](const auto&) {}},
             s.reduction);
  return r;
}

void merge_piece(const Statistic& s, Result& whole, const Result& piece, const PiecePlacement& where) {
  merge_counters(whole, piece);
  std::visit(
      Overloaded{
          [&](const reduce::PerPoint&) {
            // A cross piece of an auto run holds both ends of its pairs in the one set.
            add_placed(whole.per_point_a.counts, piece.per_point_a.counts, where.a);
            add_placed(whole.per_point_a.weighted, piece.per_point_a.weighted, where.a);
            add_placed(whole.exact.point_weighted_a, piece.exact.point_weighted_a, where.a);
            auto& to_b = where.whole_is_auto ? whole.per_point_a : whole.per_point_b;
            auto& exact_b = where.whole_is_auto ? whole.exact.point_weighted_a : whole.exact.point_weighted_b;
            add_placed(to_b.counts, piece.per_point_b.counts, where.b);
            add_placed(to_b.weighted, piece.per_point_b.weighted, where.b);
            add_placed(exact_b, piece.exact.point_weighted_b, where.b);
          },
          [&](const reduce::PointSums&) {
            const std::size_t c = piece.per_point_a.components;
            auto& to_b = where.whole_is_auto ? whole.per_point_a : whole.per_point_b;
            auto& exact_b = where.whole_is_auto ? whole.exact.point_sums_a : whole.exact.point_sums_b;
            add_placed(whole.per_point_a.counts, piece.per_point_a.counts, where.a);
            add_placed(to_b.counts, piece.per_point_b.counts, where.b);
            add_placed_rows(whole.exact.point_sums_a, piece.exact.point_sums_a, where.a, c);
            add_placed_rows(exact_b, piece.exact.point_sums_b, where.b, c);
            for (PointReductions* p : {&whole.per_point_a, &to_b}) {
              p->components = c;
              std::vector<WideSum>& e = p == &whole.per_point_a ? whole.exact.point_sums_a : exact_b;
              if (e.size() < p->counts.size() * c) e.resize(p->counts.size() * c);
            }
          },
          [&](const reduce::PairList&) {
            whole.pairs.reserve(whole.pairs.size() + piece.pairs.size());
            for (const PairRecord& p : piece.pairs) whole.pairs.push_back(place_pair(p, where));
          },
          [&](const reduce::Matrix&) {
            const std::size_t a0 = where.a.offset, b0 = where.b.offset;
            for (std::size_t i = 0; i < piece.rows; ++i)
              std::copy_n(piece.matrix.begin() + i * piece.cols, piece.cols, whole.matrix.begin() + (a0 + i) * whole.cols + b0);
            // Auto: the matrix is symmetric; the block below the diagonal is the transpose.
            if (where.whole_is_auto && !where.piece_is_auto)
              for (std::size_t i = 0; i < piece.rows; ++i)
                for (std::size_t j = 0; j < piece.cols; ++j)
                  whole.matrix[(b0 + j) * whole.cols + a0 + i] = piece.matrix[i * piece.cols + j];
          },
          [&](const reduce::Nearest&) {
            // A piece holds whole lists (every partner) of some queries: placed, not merged.
            const std::size_t k = static_cast<std::size_t>(std::max(piece.nearest.k, 0));
            if (k == 0) return;
            const std::size_t rows = piece.nearest.index.size() / k;
            for (std::size_t q = 0; q < rows; ++q) {
              const std::size_t to = where.a.at(q) * k, from = q * k;
              for (std::size_t t = 0; t < k; ++t) {
                whole.nearest.index[to + t] = where.b.at(piece.nearest.index[from + t]);
                whole.nearest.key[to + t] = piece.nearest.key[from + t];
                whole.nearest.value[to + t] = piece.nearest.value[from + t];
              }
            }
          },
          [](const auto&) {}},
      s.reduction);
  whole.info.pairs_evaluated += piece.info.pairs_evaluated;
  whole.info.pairs_settled_fp64 += piece.info.pairs_settled_fp64;
}

}  // namespace twobody
