// Exact k-NN on the EGO trees (ego_knn.hpp).
#include "twobody/detail/cpu/ego_knn.hpp"

#include <fmt/format.h>
#include <omp.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cmath>
#include <exception>
#include <limits>
#include <queue>
#include <utility>
#include <vector>

#include "twobody/detail/cpu/ego_join.hpp"
#include "twobody/detail/cpu/block_progress.hpp"
#include "twobody/detail/cpu/nearest_heap.hpp"
#include "twobody/detail/engine/memory.hpp"

namespace twobody::cpu {
namespace {

// Dimensions up to which auto considers the EGO k-NN (as the EGO join: boxes rarely separate
// anything beyond); within them a sample decides (run_ego_nearest).
constexpr int kMaxAutoDim = 64;
// The share of the brute force's keys above which the trees cost more than they save.
constexpr double kMaxSampledShare = 0.75;

// The cell width the EGO order is cut by: about the k-th neighbour's distance, from a sample of
// 32 anchors against up to 8192 partners (the sample's k·m/n-th key, or its nearest's scaled by
// (k·m/n)^(1/d) when that is below one). The width only orders and splits the rows; the pruning
// is the boxes' (exact whatever the width).
double sampled_width(const VectorSet& a, const VectorSet& b, std::size_t k) {
  const std::size_t na = a.size(), nb = b.size(), d = static_cast<std::size_t>(a.dim());
  const std::size_t queries = std::min<std::size_t>(na, 32), m = std::min<std::size_t>(nb, 8192);
  if (queries == 0 || m < 2) return 1.0;
  const double share = static_cast<double>(k) * static_cast<double>(m) / static_cast<double>(nb);
  const std::size_t rank = std::clamp<std::size_t>(static_cast<std::size_t>(share), 1, m - 1);
  std::vector<double> q(d), p(d), keys(m), picks;
  for (std::size_t s = 0; s < queries; ++s) {
    a.row_f64(s * na / queries, q.data());
    for (std::size_t t = 0; t < m; ++t) {
      b.row_f64(t * nb / m, p.data());
      double key = 0;
      for (std::size_t c = 0; c < d; ++c) key += (q[c] - p[c]) * (q[c] - p[c]);
      keys[t] = key;
    }
    std::nth_element(keys.begin(), keys.begin() + static_cast<std::ptrdiff_t>(rank), keys.end());
    picks.push_back(keys[rank]);  // rank, not rank - 1: the anchor itself may be among the sample
  }
  std::nth_element(picks.begin(), picks.begin() + static_cast<std::ptrdiff_t>(picks.size() / 2), picks.end());
  double width = std::sqrt(picks[picks.size() / 2]);
  if (share < 1) width *= std::pow(share, 1.0 / static_cast<double>(d));
  return width > 0 && std::isfinite(width) ? width : 1.0;
}

// One thread's lists for the anchors of one leaf, and its walk of the partners' tree.
class LeafSearch {
 public:
  static constexpr int kGroup = 4;
  LeafSearch(const EgoIndex& A, const EgoIndex& B, std::size_t k, bool is_auto, std::size_t leaf)
      : A_(A), B_(B), k_(k), is_auto_(is_auto), stride_(leaf), keys_(kGroup * leaf) {}

  // The k nearest of the anchors of leaf `node` into `out` (at their callers' indices).
  void run(std::uint32_t node, Result& out) {
    const EgoNode& na = A_.nodes()[node];
    const int d = A_.dim();
    const std::size_t n = na.size();
    heaps_.resize(n);
    kth_.assign(n, kInf);
    for (auto& h : heaps_) h.clear();
    worst_ = kInf;
    using Item = std::pair<double, std::uint32_t>;  // (bound, partner node), least bound first
    std::priority_queue<Item, std::vector<Item>, std::greater<>> todo;
    todo.push({box_key_bound(A_.lo(node), A_.hi(node), B_.lo(0), B_.hi(0), d, kInf), 0});
    while (!todo.empty()) {
      const auto [bound, b] = todo.top();
      todo.pop();
      if (bound > worst_) break;  // every partner left is strictly beyond every list's k-th
      const EgoNode& nb = B_.nodes()[b];
      if (nb.leaf()) {
        leaf_pair(node, b);
        continue;
      }
      for (std::uint32_t c = static_cast<std::uint32_t>(nb.child); c <= static_cast<std::uint32_t>(nb.child) + 1; ++c) {
        const double x = box_key_bound(A_.lo(node), A_.hi(node), B_.lo(c), B_.hi(c), d, worst_);
        if (!(x > worst_)) todo.push({x, c});
      }
    }
    for (std::size_t t = 0; t < n; ++t) put_nearest(heaps_[t], k_, Metric::Euclidean, A_.order()[na.begin + t], out.nearest);
  }
  std::uint64_t evaluated() const { return evaluated_; }
  std::uint64_t leaves() const { return leaves_; }

 private:
  static constexpr double kInf = std::numeric_limits<double>::infinity();
  static constexpr std::uint64_t kNoSkip = std::numeric_limits<std::uint64_t>::max();

  // Anchors of leaf na against the partners of leaf b: those whose own bound is not beyond their
  // k-th key, four at a time through the brute force's kernel.
  void leaf_pair(std::uint32_t a, std::uint32_t b) {
    const EgoNode& na = A_.nodes()[a];
    const EgoNode& nb = B_.nodes()[b];
    const int d = A_.dim();
    ++leaves_;
    // Each anchor's bound on the box, eight at a time from the leaf's panels, against its own k-th key.
    near_.clear();
    constexpr std::size_t kLanes = 8;
    for (std::size_t t0 = 0; t0 < na.size(); t0 += kLanes) {
      double bound[kLanes];
      panel_box_bounds(A_.panels(a) + t0 * static_cast<std::size_t>(d), d, B_.lo(b), B_.hi(b), bound);
      for (std::size_t u = 0; u < std::min(kLanes, na.size() - t0); ++u)
        if (!(bound[u] > kth_[t0 + u])) near_.push_back(na.begin + static_cast<std::uint32_t>(t0 + u));
    }
    for (std::size_t g = 0; g < near_.size(); g += kGroup) {
      const double* rows[kGroup];
      for (int q = 0; q < kGroup; ++q) rows[q] = A_.row(near_[std::min(g + q, near_.size() - 1)]);
      panel_keys<kGroup>(Metric::Euclidean, d, B_.panels(b), rows, nb.size(), keys_.data(), stride_);
      for (std::size_t q = 0; q < kGroup && g + q < near_.size(); ++q) {
        const std::size_t t = near_[g + q] - na.begin;
        const std::uint64_t self = A_.order()[near_[g + q]];
        auto& heap = heaps_[t];
        const double* kq = keys_.data() + q * stride_;
        const std::uint32_t* order = B_.order().data() + nb.begin;
        keep_nearest_of(heap, k_, kq, nb.size(), [order](std::size_t u) { return std::uint64_t{order[u]}; },
                        is_auto_ ? self : kNoSkip);
        evaluated_ += nb.size();
        if (heap.size() == k_) kth_[t] = heap.front().first;
      }
    }
    worst_ = *std::max_element(kth_.begin(), kth_.end());
  }

  const EgoIndex& A_;
  const EgoIndex& B_;
  std::size_t k_;
  bool is_auto_;
  std::size_t stride_;
  std::vector<double> keys_;
  std::vector<std::vector<NearEntry>> heaps_;
  std::vector<double> kth_;  // per anchor of the leaf: its k-th key, infinite until its list is full
  double worst_ = kInf;      // the largest of them
  std::vector<std::uint32_t> near_;
  std::uint64_t evaluated_ = 0, leaves_ = 0;
};

}  // namespace

std::string ego_knn_refusal(const VectorPlan& plan) {
  const EgoPolicy policy = EgoPolicy::current(plan.path);
  if (policy.force == EgoPolicy::Force::Brute) return fmt::format("requested: {}", policy.forced_by);
  if (plan.stat->metric != Metric::Euclidean) return "the EGO k-NN prunes Euclidean distances only";
  if (plan.banded()) return "a band of a hybrid run";
  if (std::max(plan.a->size(), plan.b->size()) > std::numeric_limits<std::uint32_t>::max())
    return "the EGO trees index at most 2^32 - 1 vectors a set";
  if (policy.force == EgoPolicy::Force::Ego) return {};
  const int d = plan.a->dim();
  if (d > kMaxAutoDim)
    return fmt::format("{} dimensions: the EGO k-NN is taken up to {} (its boxes prune little beyond)", d, kMaxAutoDim);
  if (plan.b->size() < 4 * policy.leaf) return "too few vectors for the EGO trees to pay";
  return {};
}

std::optional<Result> run_ego_nearest(const VectorPlan& plan, std::string& why) {
  const auto t0 = std::chrono::steady_clock::now();
  const EgoPolicy policy = EgoPolicy::current(plan.path);
  const std::size_t k = static_cast<std::size_t>(plan.k);
  const bool is_auto = plan.is_auto();
  const VectorSet* second = is_auto ? nullptr : plan.b;
  const double width = sampled_width(*plan.a, *plan.b, k);
  const EgoGrid grid = EgoGrid::make(*plan.a, second, width, plan.threads);
  if (!grid.finite) {
    why = "brute force: values that are not finite (the EGO trees' boxes need finite rows)";
    return std::nullopt;
  }
  const int d = plan.a->dim();
  const double bytes = EgoIndex::bytes(plan.a->size(), d, grid.dims.size(), policy.leaf) +
                       (second ? EgoIndex::bytes(second->size(), d, grid.dims.size(), policy.leaf) : 0.0);
  if (bytes > 0.4 * physical_memory_bytes()) {
    why = fmt::format("brute force: the EGO trees would take {:.3g} GB", bytes / 1e9);
    return std::nullopt;
  }
  const EgoIndex A(*plan.a, grid, policy.leaf, plan.threads);
  std::optional<EgoIndex> own_b;
  if (second) own_b.emplace(*second, grid, policy.leaf, plan.threads);
  const EgoIndex& B = own_b ? *own_b : A;
  const double index_seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  std::vector<std::uint32_t> leaves;
  for (std::size_t x = 0; x < A.nodes().size(); ++x)
    if (A.nodes()[x].leaf() && A.nodes()[x].size() > 0) leaves.push_back(static_cast<std::uint32_t>(x));
  Result r;
  r.output = OutputKind::Nearest;
  r.nearest.k = plan.k;
  const std::size_t na = plan.a->size();
  r.nearest.index.resize(na * k);
  r.nearest.key.resize(na * k);
  r.nearest.value.resize(na * k);
  const std::uint64_t partners = is_auto ? plan.b->size() - 1 : plan.b->size();
  // Where the boxes prune little (no structure at high d: uniform 20000 x 16, 84% of the keys
  // computed), the trees cost 1.1-1.2x the brute force; where they prune, far less (Gaussian
  // clusters 20000 x 64: 0.35 s against 4.65 s). A sample of the leaves, searched first, decides
  // (bench/RESULTS.md, 2026-11-28); where the brute force takes over, it computes their lists again.
  // The sampled leaves' lists are the run's own: they are not searched again.
  std::vector<bool> sampled(leaves.size(), false);
  std::uint64_t sampled_keys = 0, sampled_pairs = 0;
  if (policy.force != EgoPolicy::Force::Ego && leaves.size() >= 64) {
    const std::size_t samples = std::min<std::size_t>(32, leaves.size() / 16);
    std::uint64_t anchors = 0;
#pragma omp parallel num_threads(plan.threads) reduction(+ : sampled_keys, sampled_pairs, anchors)
    {
      LeafSearch search(A, B, k, is_auto, policy.leaf);
#pragma omp for schedule(dynamic, 1)
      for (std::size_t x = 0; x < samples; ++x) {
        const std::uint32_t leaf = leaves[x * leaves.size() / samples];
        search.run(leaf, r);
        anchors += A.nodes()[leaf].size();
      }
      sampled_keys += search.evaluated();
      sampled_pairs += search.leaves();
    }
    const double share = static_cast<double>(sampled_keys) / (static_cast<double>(anchors) * static_cast<double>(partners));
    if (share > kMaxSampledShare) {
      why = fmt::format("brute force: a sample of the EGO trees' leaves computed {:.3g}% of its keys (the trees pay below "
                        "{:.3g}%)",
                        100.0 * share, 100.0 * kMaxSampledShare);
      return std::nullopt;
    }
    for (std::size_t x = 0; x < samples; ++x) sampled[x * leaves.size() / samples] = true;
  }
  BlockProgress progress(plan.progress, leaves.size(), static_cast<std::size_t>(std::count(sampled.begin(), sampled.end(), true)));
  std::atomic<std::uint64_t> evaluated{sampled_keys}, leaf_pairs{sampled_pairs};
  const auto count = static_cast<std::ptrdiff_t>(leaves.size());
#pragma omp parallel num_threads(plan.threads)
  {
    LeafSearch search(A, B, k, is_auto, policy.leaf);
#pragma omp for schedule(dynamic, 1)
    for (std::ptrdiff_t x = 0; x < count; ++x) {
      if (sampled[static_cast<std::size_t>(x)] || progress.stopped()) continue;
      search.run(leaves[static_cast<std::size_t>(x)], r);
      progress.block_done();
    }
    evaluated.fetch_add(search.evaluated(), std::memory_order_relaxed);
    leaf_pairs.fetch_add(search.leaves(), std::memory_order_relaxed);
  }
  progress.rethrow();
  const std::uint64_t brute = static_cast<std::uint64_t>(na) * partners;
  r.info.pairs_evaluated = evaluated.load();
  r.info.plan = fmt::format(
      "EGO k-NN: {} keys computed ({:.3g}% of the brute force's {}) in {} leaf pairs; cells of {:.3g} (a sampled k-th "
      "neighbour's distance) over {} of {} dimensions, {} + {} leaves, index {:.3f} s",
      r.info.pairs_evaluated, 100.0 * static_cast<double>(r.info.pairs_evaluated) / static_cast<double>(std::max<std::uint64_t>(brute, 1)),
      brute, leaf_pairs.load(), width, grid.dims.size(), d, A.leaves(), own_b ? own_b->leaves() : 0, index_seconds);
  return r;
}

std::string describe_ego_knn(const VectorPlan& plan) {
  return fmt::format(
      "EGO k-NN: both sets in Epsilon Grid Order as trees of row ranges with float64 boxes; for each leaf of anchors "
      "a best-first walk of the partners' tree, nodes whose box bound is strictly beyond the leaf's worst k-th key "
      "dropped, anchors beyond a partner leaf's box skipped, the rest through the brute force's kernel (the same "
      "keys); a heap of the k best (key, index) per anchor; {} OpenMP threads (dynamic schedule over the leaves)",
      plan.threads);
}

}  // namespace twobody::cpu
