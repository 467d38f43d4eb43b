#pragma once
// Short-range forces on the CPU (reduce::PointSums): the traversal every cutoff statistic takes
// (choose_grid's cell grid, or tiles, through traverse_blocks), with a row evaluator of its own —
// a row's displacements and r² in one vectorised loop, then each pair within the cutoff evaluated
// once in float64 (twobody/pair_force.hpp) — and a per-thread sink of exact sums (seed 000's
// output privatisation, as PerPointSink). A pair adds (F, E/2) to its anchor and (−F, E/2) to its
// partner as integers on the run's grids: the same integers whichever of the two is the anchor
// (fl(a − b) = −fl(b − a), and the minimum image is symmetric), so the result does not depend on
// the threads, the cells or the order of the points, and Σ F is exactly 0.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <vector>

#include <fmt/format.h>

#include "twobody/detail/cpu/run_plan.hpp"
#include "twobody/detail/engine/backend.hpp"
#include "twobody/error.hpp"
#include "twobody/pair_force.hpp"

namespace twobody::cpu {

// One thread's sums: per point its partners, its D force components and its energy (rows of
// D + 1), and the run's energy and virial; the first pair closer than the declared closest
// separation, which stops the traversal (its terms could leave the grid).
class PointSumsSink {
 public:
  PointSumsSink(std::size_t na, std::size_t nb, bool is_auto, int dim)
      : cols_(static_cast<std::size_t>(dim) + 1), counts_a_(na, 0), counts_b_(is_auto ? 0 : nb, 0),
        sums_a_(na * cols_), sums_b_(is_auto ? 0 : nb * cols_), is_auto_(is_auto) {}

  std::uint64_t* counts_b() { return is_auto_ ? counts_a_.data() : counts_b_.data(); }
  WideSum* sums_b() { return is_auto_ ? sums_a_.data() : sums_b_.data(); }
  std::uint64_t* counts_a() { return counts_a_.data(); }
  WideSum* sums_a() { return sums_a_.data(); }
  void add_totals(const WideSum& energy, const WideSum& virial) {
    energy_ += energy;
    virial_ += virial;
  }
  void too_close(std::size_t i, std::size_t j, double r2) {
    if (bad_) return;
    bad_ = true;
    bad_i_ = i;
    bad_j_ = j;
    bad_r2_ = r2;
  }
  bool overflow() const { return bad_; }

  std::size_t cols() const { return cols_; }
  const std::vector<std::uint64_t>& counts(bool second) const { return second ? counts_b_ : counts_a_; }
  const std::vector<WideSum>& sums(bool second) const { return second ? sums_b_ : sums_a_; }
  WideSum energy() const { return energy_; }
  WideSum virial() const { return virial_; }
  bool bad() const { return bad_; }
  std::size_t bad_i() const { return bad_i_; }
  std::size_t bad_j() const { return bad_j_; }
  double bad_r2() const { return bad_r2_; }

 private:
  std::size_t cols_;
  std::vector<std::uint64_t> counts_a_, counts_b_;
  std::vector<WideSum> sums_a_, sums_b_;
  WideSum energy_, virial_;
  bool is_auto_;
  bool bad_ = false;
  std::size_t bad_i_ = 0, bad_j_ = 0;
  double bad_r2_ = 0;
};

// What a row needs besides the points: the potential, the charges (null for LJ), the box (null:
// open), the cutoff's key edge, the closest separation's square and the grids.
template <int D, class Terms>
struct PointSumsSetup {
  Terms terms;
  const double* qa = nullptr;
  const double* qb = nullptr;
  const double* length = nullptr;  // the box's sides (minimum image), or null
  double hi = 0;                   // pairs with r² < hi count (the range's key edge)
  double closest2 = 0;
  SumGrids grids;
};

template <int D, class Terms>
class PointSumsRows {
 public:
  PointSumsRows(const PointSumsSetup<D, Terms>& s, const SoaView<D>& A, const SoaView<D>& B, std::size_t max_row,
                PointSumsSink& sink)
      : s_(s), A_(A), B_(B), r2_(std::max<std::size_t>(max_row, 1)), in_(r2_.size()), sink_(sink) {
    for (int d = 0; d < D; ++d) {
      d_[d].resize(r2_.size());
      half_[d] = s.length ? 0.5 * s.length[d] : 0.0;
    }
  }

  void operator()(std::size_t i, std::size_t j0, std::size_t j1) {
    const std::size_t n = j1 - j0;
    if (s_.length) displacements<true>(i, j0, n);
    else displacements<false>(i, j0, n);
    std::size_t m = 0;
    for (std::size_t t = 0; t < n; ++t) {
      in_[m] = static_cast<std::uint32_t>(t);
      m += r2_[t] < s_.hi;
    }
    if (m == 0) return;
    const int cols = D + 1;
    WideSum* si = sink_.sums_a() + i * cols;
    WideSum* sb = sink_.sums_b();
    std::uint64_t* cb = sink_.counts_b();
    WideSum energy, virial;
    const SumGrid& gf = s_.grids.force;
    for (std::size_t u = 0; u < m; ++u) {
      const std::size_t t = in_[u], j = j0 + t;
      const double r2 = r2_[t];
      if (r2 < s_.closest2) {
        sink_.too_close(i, j, r2);
        return;
      }
      const PairTerm term = s_.terms(r2, s_.qa ? s_.qa[i] * s_.qb[j] : 1.0);
      WideSum* sj = sb + j * cols;
      for (int d = 0; d < D; ++d) add_pair(si[d], sj[d], gf, term.f * d_[d][t], true);
      add_pair(si[D], sj[D], s_.grids.energy, 0.5 * term.energy, false);
      add_pair(energy, energy, s_.grids.energy, 0.5 * term.energy, false);  // both halves
      add_once(virial, s_.grids.virial, term.f * r2);
      ++cb[j];
    }
    sink_.counts_a()[i] += m;
    sink_.add_totals(energy, virial);
  }

 private:
  // The term on the grid, added to a and (negated when `opposite`) to b: one int64 of steps for
  // the ordinary terms, the wide form for a close contact's.
  static void add_pair(WideSum& a, WideSum& b, const SumGrid& g, double term, bool opposite) {
    const double x = std::nearbyint(term * g.inverse_step * g.inverse_step2);
    if (std::fabs(x) < 0x1p63) {
      const auto v = static_cast<std::int64_t>(x);
      a.add(v);
      b.add(opposite ? -v : v);
      return;
    }
    const WideSum w = WideSum::of_integer(x);
    a += w;
    b += opposite ? -w : w;
  }

  static void add_once(WideSum& a, const SumGrid& g, double term) {
    const double x = std::nearbyint(term * g.inverse_step * g.inverse_step2);
    if (std::fabs(x) < 0x1p63) a.add(static_cast<std::int64_t>(x));
    else a += WideSum::of_integer(x);
  }

  // d = a − b (to the minimum image: −L if > L/2, +L if < −L/2, the rule's) and r² in coordinate
  // order, for the whole row.
  template <bool Periodic>
  void displacements(std::size_t i, std::size_t j0, std::size_t n) {
    double a[D];
    for (int d = 0; d < D; ++d) a[d] = A_.x[d][i];
    double* r2 = r2_.data();
    for (std::size_t t = 0; t < n; ++t) r2[t] = 0;
    for (int d = 0; d < D; ++d) {
      const double* b = B_.x[d] + j0;
      double* out = d_[d].data();
      const double L = Periodic ? s_.length[d] : 0.0, h = half_[d];
#pragma omp simd
      for (std::size_t t = 0; t < n; ++t) {
        double dx = a[d] - b[t];
        if constexpr (Periodic) {
          dx = dx > h ? dx - L : dx;
          dx = dx < -h ? dx + L : dx;
        }
        out[t] = dx;
        r2[t] += dx * dx;
      }
    }
  }

  const PointSumsSetup<D, Terms>& s_;
  const SoaView<D>& A_;
  const SoaView<D>& B_;
  std::vector<double> d_[D];
  double half_[D];
  std::vector<double> r2_;
  std::vector<std::uint32_t> in_;
  PointSumsSink& sink_;
};

// The threads' sums added point by point (in thread order; integers, so any order gives these
// bits), placed in the callers' order (the grid's `order`, or none).
inline void merge_point_sums(const std::vector<PointSumsSink>& sinks, bool second, const std::uint32_t* order,
                             PointReductions& out, std::vector<WideSum>& exact, int threads) {
  const std::size_t cols = sinks.at(0).cols(), n = sinks[0].counts(second).size();
  out.counts.assign(n, 0);
  out.components = cols;
  exact.assign(n * cols, WideSum{});
  const auto points = static_cast<std::int64_t>(n);
#pragma omp parallel for num_threads(threads) schedule(static)
  for (std::int64_t k = 0; k < points; ++k) {
    const std::size_t to = order ? order[k] : static_cast<std::size_t>(k);
    for (const PointSumsSink& s : sinks) {
      out.counts[to] += s.counts(second)[k];
      for (std::size_t c = 0; c < cols; ++c) exact[to * cols + c] += s.sums(second)[k * cols + c];
    }
  }
}

template <int D>
Result run_point_sums(const Plan& plan, const GridChoice* grid) {
  const Statistic& s = *plan.stat;
  const auto& p = std::get<reduce::PointSums>(s.reduction);
  const PlanSets<D> sets(plan, grid);
  const bool use_grid = sets.use_grid;
  const PointSet &pa = sets.pa, &pb = sets.pb;
  const SoaView<D>&A = sets.A, &B = sets.B;
  const TraversalShape& shape = sets.shape;
  const std::size_t max_row = sets.max_row;
  const double* length = s.metric == Metric::Periodic ? s.box.length.data() : nullptr;

  Result r;
  r.output = s.output();
  const std::vector<PointSumsSink> sinks = visit_pair_force(p.force, p.range.hi(), [&](const auto& terms) {
    using Terms = std::decay_t<decltype(terms)>;
    PointSumsSetup<D, Terms> setup{terms,
                                   s.weighted ? pa.weights().data() : nullptr,
                                   s.weighted ? pb.weights().data() : nullptr,
                                   length,
                                   plan.edges.hi(),
                                   p.closest * p.closest,
                                   plan.grids};
    const auto make_sink = [&] { return PointSumsSink(A.n, B.n, shape.is_auto, D); };
    const auto make_rows = [&](PointSumsSink& sink) { return PointSumsRows<D, Terms>(setup, A, B, max_row, sink); };
    return traverse_plan<D>(use_grid ? grid : nullptr, A, B, shape, make_sink, make_rows);
  });
  plan.lap("traversal");
  // A pair closer than the closest separation declared: named in the callers' indices, the
  // result never formed.
  for (const PointSumsSink& k : sinks) {
    if (!k.bad()) continue;
    std::size_t i = k.bad_i(), j = k.bad_j();
    if (use_grid) {
      i = grid->a->order[i];
      j = (grid->b ? grid->b->order : grid->a->order)[j];
    }
    if (shape.is_auto && i > j) std::swap(i, j);
    throw_input(k.bad_r2() == 0
                    ? fmt::format("points {} and {} coincide: the force between them is infinite (remove duplicates)",
                                  i + 1, j + 1)
                    : fmt::format("points {} and {} are {} apart, closer than the closest separation {} the sums' grid was "
                                  "fixed for",
                                  i + 1, j + 1, std::sqrt(k.bad_r2()), p.closest));
  }
  const std::uint32_t* oa = use_grid ? grid->a->order.data() : nullptr;
  merge_point_sums(sinks, false, oa, r.per_point_a, r.exact.point_sums_a, shape.threads);
  if (!shape.is_auto) {
    const std::uint32_t* ob = use_grid ? grid->b->order.data() : nullptr;
    merge_point_sums(sinks, true, ob, r.per_point_b, r.exact.point_sums_b, shape.threads);
  }
  r.exact.totals.assign(2, WideSum{});
  for (const PointSumsSink& k : sinks) {
    r.exact.totals[0] += k.energy();
    r.exact.totals[1] += k.virial();
  }
  plan.lap("merge");
  r.info.threads = shape.threads;
  r.info.pairs_evaluated = use_grid ? grid->plan.evaluations : pair_total(A.n, B.n, shape.is_auto);
  r.exact.grids = plan.grids;
  round_exact_sums(r);
  return r;
}

}  // namespace twobody::cpu
