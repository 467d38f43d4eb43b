#pragma once
// The binned vector reductions' rows (the ε-join's counts, per-vector counts and pairs, and
// histograms) by the Gram form, for the brute-force traversal (run_vectors.cpp): as the k-NN
// (gram_knn.hpp), each pair's rule key lies in an interval around q_i + q_j − 2 x'_i·x'_j
// (gram_form.hpp), which costs one fused multiply-add a coordinate against the rule's three.
// The sink then gets, for each pair, the rule's own key where the result depends on it, and
// otherwise the interval's lower end, which bins alike:
//   - counts (OnEdges): the rule's key only when the interval holds an edge of the bins (or
//     straddles the range); an interval inside one bin, or wholly outside the range, bins as the
//     key inside it does (find_bin is monotonic);
//   - pair lists (InRange): the rule's key for every pair whose interval meets the range, since
//     the list holds its distance; pairs wholly outside are dropped either way.
// So the outputs are the rule's, bit for bit (Joins.GramFormEqualsTheRule*).
#include <algorithm>
#include <atomic>
#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

#include "twobody/detail/cpu/gram_form.hpp"
#include "twobody/detail/cpu/tiled_traversal.hpp"
#include "twobody/detail/cpu/vector_rows.hpp"
#include "twobody/detail/engine/backend.hpp"
#include "twobody/detail/engine/key_edges.hpp"

namespace twobody::cpu {

enum class GramExactness { OnEdges, InRange };

// Why the Gram form does not serve this binned reduction ("" when it does): Euclidean vectors of
// at least 32 dimensions on the brute force, not a matrix (every entry is a key there) nor a band
// of a hybrid run, unless TWOBODY_CPU_JOIN_KEYS=gram|rule forces it.
inline std::string gram_join_refusal(const VectorPlan& plan) {
  if (plan.stat->output() == OutputKind::Matrix) return "a matrix takes every pair's key";
  return gram::refusal(plan, "TWOBODY_CPU_JOIN_KEYS");
}

// One thread's evaluator (the traversal's rows(i, j0, j1, bp)), VectorKeyRows' counterpart: the
// Gram dots of 8 anchors against the partners every one of them needs, computed together and
// handed out as the anchors' rows come.
template <class Sink>
class GramKeyRows {
 public:
  static constexpr int kGroup = 8;
  GramKeyRows(const KeyEdges& edges, GramExactness exactness, const RuleRows& A, const RuleRows& B, std::size_t tile,
              const std::vector<double>& centre, std::atomic<std::uint64_t>& settled, Sink& sink)
      : edges_(edges), exactness_(exactness), A_(A), B_(B), dim_(A.dim()), tile_(tile), interval_(A.dim()),
        block_(A.dim(), tile, centre, true), centre_(centre),
        raw_(kGroup * static_cast<std::size_t>(A.dim())), centred_(raw_.size()), dots_(kGroup * tile),
        lower_(tile), upper_(tile), keys_(tile), need_(tile), settled_(settled), sink_(sink) {}
  GramKeyRows(const GramKeyRows&) = delete;
  ~GramKeyRows() {
    if (my_settled_) settled_.fetch_add(my_settled_, std::memory_order_relaxed);
  }

  void operator()(std::size_t i, std::size_t j0, std::size_t j1, const BlockPair& bp) {
    block_.load(B_, bp.b0, bp.b1);
    if (!(bp.a0 == group_a0_ && bp.b0 == group_b0_ && i >= group_i0_ && i < group_i0_ + kGroup)) compute_group(i, bp);
    const std::size_t q = i - group_i0_, n = j1 - j0;
    const double qi = qa_[q];
    const double* g = dots_.data() + q * tile_ + (j0 - group_j0_);
    const double* qb = block_.norms().data() + (j0 - bp.b0);
    const double* e = edges_.padded.data();
    const int nbins = edges_.nbins, steps = edges_.steps;
    const double e_lo = edges_.lo(), e_hi = edges_.hi();
    const bool in_range = exactness_ == GramExactness::InRange;
    unsigned char* need = need_.data();
    double* keys = keys_.data();
    // Each pair's interval, whether it needs the rule's key, and the interval's lower end as its
    // key meanwhile: one vectorised pass for one bin (a join's range needs no lookup), else with
    // the bins' lookup.
    double* lower = lower_.data();
    double* upper = upper_.data();
#pragma omp simd
    for (std::size_t t = 0; t < n; ++t) interval_(qi, qb[t], g[t], lower[t], upper[t]);
    if (nbins == 1) {
#pragma omp simd
      for (std::size_t t = 0; t < n; ++t) {
        const bool outside = upper[t] < e_lo || lower[t] >= e_hi;
        const bool inside = lower[t] >= e_lo && upper[t] < e_hi;
        need[t] = static_cast<unsigned char>(!outside && (in_range || !inside));
        keys[t] = lower[t];
      }
    } else {
      for (std::size_t t = 0; t < n; ++t) {
        const bool outside = upper[t] < e_lo || lower[t] >= e_hi;
        // (Both ends in one bin; not both beyond the range's two ends, which find_bin also calls −1.)
        const int bin = find_bin(e, nbins, steps, lower[t]);
        const bool one_bin = bin >= 0 && bin == find_bin(e, nbins, steps, upper[t]);
        need[t] = static_cast<unsigned char>(!outside && (in_range || !one_bin));
        keys[t] = lower[t];
      }
    }
    const double* anchor = raw_.data() + q * static_cast<std::size_t>(dim_);
    std::uint64_t exact = 0;
    for (std::size_t t0 = 0; t0 < n; t0 += 8) {
      // Eight flags at a time: most rows need a key for a handful of pairs at most.
      std::uint64_t any = 0;
      if (t0 + 8 <= n) std::memcpy(&any, need + t0, 8);
      else any = 1;
      if (!any) continue;
      for (std::size_t t = t0; t < std::min(n, t0 + 8); ++t)
        if (need[t]) {
          keys[t] = gram::rule_key(anchor, block_.raw(j0 - bp.b0 + t), dim_, gram::kLanes);
          ++exact;
        }
    }
    my_settled_ += exact;
    sink_.consume(i, j0, keys, n, [](double k) { return natural_of_vector_key(Metric::Euclidean, k); });
  }

 private:
  // Anchors [i, i + 8) of the block (fewer at its end; a missing one repeats the last) against
  // the partners every one of them needs: from the first anchor's start on, taken down to the
  // first partner of its panel of 8.
  void compute_group(std::size_t i, const BlockPair& bp) {
    const std::size_t dim = static_cast<std::size_t>(dim_);
    const double* rows[kGroup];
    for (int q = 0; q < kGroup; ++q) {
      const std::size_t at = std::min(i + static_cast<std::size_t>(q), bp.a1 - 1), s = static_cast<std::size_t>(q) * dim;
      A_.load(at, raw_.data() + s);
      qa_[q] = gram::centre_row(raw_.data() + s, centre_, centred_.data() + s, 1);
      rows[q] = centred_.data() + s;
    }
    group_j0_ = bp.triangle ? std::max(i + 1, bp.b0) : bp.b0;
    group_j0_ = bp.b0 + (group_j0_ - bp.b0) / gram::kLanes * gram::kLanes;
    if (group_j0_ < bp.b1)
      gram::dots<kGroup>(dim_, block_.panels() + (group_j0_ - bp.b0) * dim, rows, bp.b1 - group_j0_, dots_.data(), tile_);
    group_a0_ = bp.a0;
    group_b0_ = bp.b0;
    group_i0_ = i;
  }

  const KeyEdges& edges_;
  GramExactness exactness_;
  const RuleRows& A_;
  const RuleRows& B_;
  int dim_;
  std::size_t tile_;
  gram::KeyInterval interval_;
  gram::CentredPanels block_;
  const std::vector<double>& centre_;
  std::vector<double> raw_, centred_, dots_, lower_, upper_, keys_;
  std::vector<unsigned char> need_;
  double qa_[kGroup] = {};
  std::atomic<std::uint64_t>& settled_;
  std::uint64_t my_settled_ = 0;
  std::size_t group_a0_ = static_cast<std::size_t>(-1), group_b0_ = static_cast<std::size_t>(-1), group_i0_ = 0,
              group_j0_ = 0;
  Sink& sink_;
};

}  // namespace twobody::cpu
