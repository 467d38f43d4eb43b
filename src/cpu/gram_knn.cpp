// Exact k-NN on the CPU by the Gram form: gram_knn.hpp.
//
// Each pair's rule key lies in the interval of gram_form.hpp around the Gram form's value.
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
#include <exception>
#include <limits>
#include <vector>

#include "twobody/detail/cpu/block_progress.hpp"
#include "twobody/detail/cpu/gram_form.hpp"
#include "twobody/detail/cpu/nearest_heap.hpp"

namespace twobody::cpu {

namespace {

constexpr int kQ = 8;
using gram::kInf;

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

}  // namespace

std::string gram_knn_refusal(const VectorPlan& plan) { return gram::refusal(plan, "TWOBODY_CPU_KNN"); }

Result run_gram_nearest(const VectorPlan& plan, const RuleRows& A, const RuleRows& B, std::size_t tile) {
  const std::size_t na = A.size(), nb = B.size(), k = static_cast<std::size_t>(plan.k);
  const int dim = A.dim();
  const bool is_auto = plan.is_auto();
  const std::vector<double> centre = gram::centre_of(A, B, is_auto, plan.threads);
  const gram::KeyInterval interval(dim);
  const std::size_t atile = query_tile(na, plan.threads, tile);
  const std::size_t blocks_a = (na + atile - 1) / atile, blocks_b = (nb + tile - 1) / tile;
  Result r = nearest_result(na, plan.k);
  std::atomic<std::uint64_t> settled{0};
  BlockProgress progress(plan.progress, blocks_a);
#pragma omp parallel num_threads(plan.threads)
  {
    gram::CentredPanels partners(dim, tile, centre);
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
        qa[s] = gram::centre_row(raw.data() + at, centre, centred.data() + at, 1);
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
          gram::dots<kQ>(dim, partners.panels(), rows, n, dots.data(), tile);
          for (std::size_t i = g; i < std::min(a1, g + kQ); ++i) {
            const double qi = qa[i - a0];
            const double* gi = dots.data() + (i - g) * tile;
            QueryBounds& query = queries[i - a0];
            // The intervals of the row, vectorised; then only the partners whose interval starts
            // at or below the query's k-th end are offered (after the first blocks, few are).
#pragma omp simd
            for (std::size_t t = 0; t < n; ++t) interval(qi, qb[t], gi[t], lower[t], upper[t]);
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
          keep_nearest(heap, k, {gram::rule_key(raw.data() + (i - a0) * static_cast<std::size_t>(dim), other.data(), dim), e.second});
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
