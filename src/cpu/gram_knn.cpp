// Exact k-NN on the CPU by the Gram form: gram_knn.hpp.
//
// The interval of a pair's rule key around the Gram form's κ̂ = fl(fl(q_i + q_j) − 2ĝ), on rows
// x' = fl(x − c), q = Σ_k fl(x'_k²) in order, ĝ = Σ_k x'_ik x'_jk by fused multiply-adds, S = q_i + q_j:
//   |κ̂ − ‖x'_i − x'_j‖²| ≤ 1.01 (2γ_d + 3u) S              (gemm_bounds.hpp: l2 on the GEMM route)
//   |‖x'_i − x'_j‖² − D²| ≤ 4.1 u S                          (the centring: each x' within u|x − c|, so
//                                                            ‖x'_i − x'_j‖ within e_c = 1.01u√(2S) of
//                                                            D = ‖x_i − x_j‖ ≤ √(2S)(1 + u) + e_c)
//   |key − D²| ≤ γ_{d+3} D²                                  (the rule's own: rule_squared_error)
// so key ∈ [max(0, κ̂ − cS)(1 − γ_{d+3}), (κ̂ + cS)(1 + γ_{d+3})], c = 1.01 (2γ_d + 3u) + 4.1u, each
// end moved out by 2^-50 of itself for the few roundings of computing it. S or κ̂ beyond 2^1020
// (not finite, or near it), or S below 2^-900 (products that could underflow): the interval is
// [0, ∞).
//
// Why the lists are the rule's: let T be the k-th smallest interval end over a query's partners
// and T* its k-th smallest rule key. The k partners with the smallest ends have keys ≤ T, so
// T* ≤ T; each partner of the rule's list has key ≤ T*, so its interval starts at or below T: it
// is kept. The running T only falls as partners are seen, so a partner dropped on the way (its
// start above the T of that moment) starts above the final T too.
#include "twobody/detail/cpu/gram_knn.hpp"

#include <omp.h>

#include <algorithm>
#include <atomic>
#include <cmath>
#include <cstdlib>
#include <exception>
#include <limits>
#include <vector>

#include "twobody/detail/cpu/block_progress.hpp"
#include "twobody/detail/cpu/nearest_heap.hpp"
#include "twobody/detail/exact/gemm_bounds.hpp"

namespace twobody::cpu {

namespace {

constexpr std::size_t kLanes = 8;
constexpr int kQ = 8;
constexpr double kInf = std::numeric_limits<double>::infinity();

// ĝ of Q centred anchors against the n centred partners of `panels` (panel_doubles' layout): the
// accumulators of 8 partners × Q anchors in registers through the whole sum, one fused
// multiply-add a coordinate (any order is within the bound).
template <int Q>
void gram_dots(int dim, const double* panels, const double* const (&a)[Q], std::size_t n, double* out, std::size_t stride) {
  for (std::size_t t0 = 0; t0 < n; t0 += kLanes) {
    double acc[Q][kLanes] = {};
    const double* panel = panels + t0 * static_cast<std::size_t>(dim);
    for (int k = 0; k < dim; ++k) {
      const double* col = panel + static_cast<std::size_t>(k) * kLanes;
      for (int q = 0; q < Q; ++q) {
        const double aq = a[q][k];
#pragma omp simd
        for (std::size_t u = 0; u < kLanes; ++u) acc[q][u] = std::fma(aq, col[u], acc[q][u]);
      }
    }
    const std::size_t lanes = std::min(kLanes, n - t0);
    for (int q = 0; q < Q; ++q)
      for (std::size_t u = 0; u < lanes; ++u) out[static_cast<std::size_t>(q) * stride + t0 + u] = acc[q][u];
  }
}

// row − c into out[k·stride] (a panel's lane: stride 8; a row: 1), and its norm q = Σ_k x'_k² in order.
double centre_row(const double* row, const std::vector<double>& c, double* out, std::size_t stride) {
  double q = 0;
  for (std::size_t k = 0; k < c.size(); ++k) {
    const double x = row[k] - c[k];
    out[k * stride] = x;
    q += x * x;
  }
  return q;
}

// Rows [r0, r1) of a set centred on c, in panels of 8, with their centred norms q (in order).
class CentredPanels {
 public:
  CentredPanels(int dim, std::size_t width, const std::vector<double>& centre)
      : dim_(dim), t_(panel_doubles(width, dim), 0.0), q_(width), row_(static_cast<std::size_t>(dim)), c_(centre) {}
  void load(const RuleRows& rows, std::size_t r0, std::size_t r1) {
    const std::size_t d = static_cast<std::size_t>(dim_);
    for (std::size_t j = r0; j < r1; ++j) {
      rows.load(j, row_.data());
      q_[j - r0] = centre_row(row_.data(), c_, t_.data() + (j - r0) / kLanes * kLanes * d + (j - r0) % kLanes, kLanes);
    }
  }
  const double* panels() const { return t_.data(); }
  const std::vector<double>& norms() const { return q_; }

 private:
  int dim_;
  std::vector<double> t_, q_, row_;
  const std::vector<double>& c_;
};

// The centre: the midpoint of the two sets' joint range, per coordinate.
std::vector<double> centre_of(const RuleRows& A, const RuleRows& B, bool is_auto, int threads) {
  const std::size_t d = static_cast<std::size_t>(A.dim());
  std::vector<double> lo(d, kInf), hi(d, -kInf);
  for (const RuleRows* s : {&A, &B}) {
    if (s == &B && is_auto) break;
    const auto n = static_cast<std::ptrdiff_t>(s->size());
#pragma omp parallel num_threads(threads)
    {
      std::vector<double> row(d), l(d, kInf), h(d, -kInf);
#pragma omp for schedule(static) nowait
      for (std::ptrdiff_t i = 0; i < n; ++i) {
        s->load(static_cast<std::size_t>(i), row.data());
        for (std::size_t k = 0; k < d; ++k) {
          l[k] = std::min(l[k], row[k]);
          h[k] = std::max(h[k], row[k]);
        }
      }
#pragma omp critical
      for (std::size_t k = 0; k < d; ++k) {
        lo[k] = std::min(lo[k], l[k]);
        hi[k] = std::max(hi[k], h[k]);
      }
    }
  }
  std::vector<double> c(d, 0.0);
  for (std::size_t k = 0; k < d; ++k)
    if (lo[k] <= hi[k]) c[k] = 0.5 * lo[k] + 0.5 * hi[k];
  return c;
}

// A query's running state: the k smallest interval ends (a max-heap) and the partners whose
// intervals start at or below the k-th of them (pruned as it falls).
struct QueryBounds {
  std::vector<double> ends;
  std::vector<NearEntry> kept;  // (interval start, partner)
  double threshold(std::size_t k) const { return ends.size() == k ? ends.front() : kInf; }
  void offer(std::size_t k, double lower, double upper, std::uint64_t j) {
    double t = threshold(k);
    if (upper < t || ends.size() < k) {
      if (ends.size() == k) {
        std::pop_heap(ends.begin(), ends.end());
        ends.back() = upper;
      } else {
        ends.push_back(upper);
      }
      std::push_heap(ends.begin(), ends.end());
      t = threshold(k);
    }
    if (lower <= t) {
      kept.push_back({lower, j});
      if (kept.size() > 4 * k + 512) prune(k);
    }
  }
  void prune(std::size_t k) {
    const double t = threshold(k);
    kept.erase(std::remove_if(kept.begin(), kept.end(), [t](const NearEntry& e) { return e.first > t; }), kept.end());
  }
};

// The rule's key of a pair (panel_keys' Euclidean sum, the same operations in the same order).
double rule_key(const double* a, const double* b, int dim) {
  double acc = 0;
  for (int k = 0; k < dim; ++k) {
    const double d = a[k] - b[k];
    acc += d * d;
  }
  return acc;
}

}  // namespace

std::string gram_knn_refusal(const VectorPlan& plan) {
  if (plan.stat->metric != Metric::Euclidean) return "the Gram form serves the Euclidean distance";
  if (plan.banded()) return "a band of a hybrid run takes the rule's keys";
  const char* forced = std::getenv("TWOBODY_CPU_KNN");
  const std::string force = forced ? forced : "";
  if (force == "rule") return "TWOBODY_CPU_KNN=rule";
  if (force == "gram") return {};
  if (plan.a->dim() < 32) return "below 32 dimensions the rule's own keys are as fast";
  return {};
}

Result run_gram_nearest(const VectorPlan& plan, const RuleRows& A, const RuleRows& B, std::size_t tile) {
  const std::size_t na = A.size(), nb = B.size(), k = static_cast<std::size_t>(plan.k);
  const int dim = A.dim();
  const bool is_auto = plan.is_auto();
  const std::vector<double> centre = centre_of(A, B, is_auto, plan.threads);
  const double c = 1.01 * (2 * exact::gemm_gamma(dim) + 3 * exact::kGemmUnit) + 4.1 * exact::kGemmUnit;
  const double rule = exact::rule_squared_error(dim);
  const double down = (1 - rule) * (1 - 0x1p-50), up = (1 + rule) * (1 + 0x1p-50);
  const std::size_t atile = query_tile(na, plan.threads, tile);
  const std::size_t blocks_a = (na + atile - 1) / atile, blocks_b = (nb + tile - 1) / tile;
  Result r = nearest_result(na, plan.k);
  std::atomic<std::uint64_t> settled{0};
  BlockProgress progress(plan.progress, blocks_a);
#pragma omp parallel num_threads(plan.threads)
  {
    CentredPanels partners(dim, tile, centre);
    // The anchors' rows as the rule reads them, their centred rows and norms.
    std::vector<double> raw(atile * static_cast<std::size_t>(dim)), centred(raw.size()), qa(atile);
    std::vector<double> other(static_cast<std::size_t>(dim)), dots(kQ * tile), lower(tile), upper(tile);
    std::vector<QueryBounds> queries(atile);
    std::vector<NearEntry> heap;
    std::uint64_t my_settled = 0;
#pragma omp for schedule(dynamic, 1)
    for (std::size_t I = 0; I < blocks_a; ++I) {
      if (progress.stopped()) continue;
      const std::size_t a0 = I * atile, a1 = std::min(na, a0 + atile);
      for (std::size_t i = a0; i < a1; ++i) {
        const std::size_t s = i - a0, at = s * static_cast<std::size_t>(dim);
        A.load(i, raw.data() + at);
        qa[s] = centre_row(raw.data() + at, centre, centred.data() + at, 1);
        queries[s].ends.clear();
        queries[s].kept.clear();
      }
      for (std::size_t J = 0; J < blocks_b; ++J) {
        const std::size_t b0 = J * tile, b1 = std::min(nb, b0 + tile), n = b1 - b0;
        partners.load(B, b0, b1);
        const std::vector<double>& qb = partners.norms();
        for (std::size_t g = a0; g < a1; g += kQ) {
          const double* rows[kQ];
          for (int q = 0; q < kQ; ++q)
            rows[q] = centred.data() + (std::min(g + static_cast<std::size_t>(q), a1 - 1) - a0) * static_cast<std::size_t>(dim);
          gram_dots<kQ>(dim, partners.panels(), rows, n, dots.data(), tile);
          for (std::size_t i = g; i < std::min(a1, g + kQ); ++i) {
            const double qi = qa[i - a0];
            const double* gi = dots.data() + (i - g) * tile;
            QueryBounds& query = queries[i - a0];
            // The intervals of the row, vectorised; then only the partners whose interval starts
            // at or below the query's k-th end are offered (after the first blocks, few are).
#pragma omp simd
            for (std::size_t t = 0; t < n; ++t) {
              const double S = qi + qb[t];
              const double kappa = S - 2 * gi[t];
              const bool bounded = S >= 0x1p-900 && S <= 0x1p1020 && kappa <= 0x1p1020 && kappa >= -0x1p1020;
              const double e = c * S;
              const double lo = kappa - e > 0 ? (kappa - e) * down : 0.0;
              lower[t] = bounded ? lo : 0.0;
              upper[t] = bounded ? (kappa + e) * up : kInf;
            }
            double kth = query.threshold(k);
            for (std::size_t t = 0; t < n; ++t) {
              if (lower[t] > kth) continue;
              const std::uint64_t j = b0 + t;
              if (is_auto && j == i) continue;
              query.offer(k, lower[t], upper[t], j);
              kth = query.threshold(k);
            }
          }
        }
      }
      // The kept partners' rule keys, and the lists from them.
      for (std::size_t i = a0; i < a1; ++i) {
        QueryBounds& query = queries[i - a0];
        query.prune(k);
        heap.clear();
        for (const NearEntry& e : query.kept) {
          B.load(e.second, other.data());
          keep_nearest(heap, k, {rule_key(raw.data() + (i - a0) * static_cast<std::size_t>(dim), other.data(), dim), e.second});
        }
        my_settled += query.kept.size();
        put_nearest(heap, k, plan.stat->metric, i, r.nearest);
      }
      progress.block_done();
    }
    settled.fetch_add(my_settled, std::memory_order_relaxed);
  }
  progress.rethrow();
  r.info.pairs_evaluated = static_cast<std::uint64_t>(na) * (is_auto ? nb - 1 : nb);
  r.info.pairs_settled_fp64 = settled.load();
  return r;
}

}  // namespace twobody::cpu
