#pragma once
// The CPU's EGO join (Super-EGO, seed 004 §4.3.2; NEW-SUPER-EGO §4.4.5): both sets in Epsilon
// Grid Order as trees of row ranges (ego_index.hpp), Super-EGO's recursion on pairs of ranges —
// a pair whose boxes are provably beyond the range's last edge is dropped, a pair of leaves is
// kept, otherwise the larger range is split where its cells change — run once over OpenMP tasks
// to list the leaf pairs, which the brute force's kernel (panel_keys<4>: the same rule,
// the same bits) then evaluates through the same sinks. The list's pairs, less the share a sample
// of it says the anchors' box test will skip, are the prediction the cost model weighs against
// the brute force's n(n-1)/2 before any key is computed.
#include <atomic>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "twobody/detail/cpu/ego_index.hpp"
#include "twobody/detail/cpu/vector_rows.hpp"
#include "twobody/detail/engine/backend.hpp"

namespace twobody::cpu {

// What the EGO join may do and costs, with the overrides: TWOBODY_CPU_JOIN = auto | ego | brute
// (forces a traversal; it wins over RunOptions::path, where brute forces the brute force and grid
// the EGO join) and TWOBODY_EGO_LEAF (rows a leaf holds at most, 8 to 4096).
struct EgoPolicy {
  enum class Force { Auto, Ego, Brute };
  Force force = Force::Auto;
  std::string forced_by;  // the override that forced it
  // 128 rows: against 64 and 256 at d = 9 and 16, smaller leaves prune a little more but cost
  // more leaf pairs and anchor bounds, larger ones prune less (bench/RESULTS.md, 2026-11-27).
  std::size_t leaf = 128;
  // The cost model, in the brute force's pairs: a pair computed in a leaf pair costs pair_cost of
  // them (measured 1.1-1.2 at d = 16 to 64: a leaf's partners end every few chunks of 8), each
  // leaf pair item_cost more (its anchors' box bounds, its groups of four, the calls).
  double pair_cost = 1.15;
  double item_cost = 2.0 * 128;
  // Dimensions the cost model considers the EGO join for: from 9 (fewer run as points, on the
  // point engine's grid) to 64 (beyond, boxes of ε rarely separate anything).
  int max_auto_dim = 64;

  static EgoPolicy current(const std::string& path);
  std::string overrides() const;
};

// A pair of tree nodes to join: node a of the anchors' tree against node b of the partners'; in a
// self-join both are of the one tree and a == b is a node with itself, each unordered pair once.
struct EgoItem {
  std::uint32_t a = 0, b = 0;
};

// The join as the recursion left it: the trees and the leaf pairs to evaluate.
struct EgoJoin {
  EgoGrid grid;
  std::unique_ptr<EgoIndex> a, b;  // b null for a self-join
  std::vector<EgoItem> items;
  std::uint64_t candidates = 0;   // pairs in the items
  std::uint64_t predicted = 0;    // of them, those the leaf evaluator is expected to compute
  std::uint64_t node_pairs = 0;   // pairs of nodes the recursion visited
  bool complete = false;          // false: stopped early, the list too long
  std::size_t leaf = 0;           // rows a leaf holds at most
  double hi = 0;                  // pairs with key >= hi are out of the range
  bool is_auto = true;
  double seconds = 0;             // sorting, trees and recursion
  const EgoIndex& partners() const { return b ? *b : *a; }
};

struct EgoChoice {
  bool chosen = false;
  std::string why;                // the choice, with the predicted pairs of each
  std::unique_ptr<EgoJoin> join;  // when chosen
};

// Builds the EGO join where it may serve the plan and takes it when its predicted cost beats the
// brute force's (or when forced).
EgoChoice choose_ego(const VectorPlan& plan);
std::string describe_ego(const VectorPlan& plan);

// The bounds of one panel's 8 rows (panel_keys' layout) against the box [lo, hi]: each lane the
// sum box_key_bound takes (a row is its own box), in the same order, whole (no early stop).
inline void panel_box_bounds(const double* panel, int d, const double* lo, const double* hi, double (&s)[8]) {
  constexpr std::size_t kLanes = 8;
  for (std::size_t u = 0; u < kLanes; ++u) s[u] = 0;
  for (int k = 0; k < d; ++k) {
    const double* c = panel + static_cast<std::size_t>(k) * kLanes;
    const double l = lo[k], h = hi[k];
#pragma omp simd
    for (std::size_t u = 0; u < kLanes; ++u) {
      // As box_key_bound's gap: at most one of the two differences is positive.
      const double g = std::max(std::max(c[u] - h, l - c[u]), 0.0);
      const double square = g * g;
      s[u] += square;
    }
  }
}

// Appends to `out` first + t for the rows t < n held in panels of 8 (panel_keys' layout) whose
// bound against the box [lo, hi] is below `limit`: a panel at a time, each lane panel_box_bounds'.
inline void rows_near_box(const double* panels, std::size_t n, int d, const double* lo, const double* hi, double limit,
                          std::uint32_t first, std::vector<std::uint32_t>& out) {
  constexpr std::size_t kLanes = 8;
  for (std::size_t t0 = 0; t0 < n; t0 += kLanes) {
    double s[kLanes];
    panel_box_bounds(panels + t0 * static_cast<std::size_t>(d), d, lo, hi, s);
    for (std::size_t u = 0; u < std::min(kLanes, n - t0); ++u)
      if (s[u] < limit) out.push_back(first + static_cast<std::uint32_t>(t0 + u));
  }
}

// One thread's evaluator of the join's leaf pairs (traverse_blocks' rows.block(item)): the
// anchors whose distance to the partner leaf's box is provably beyond the range are skipped, the
// others go four at a time through the brute force's kernel (panel_keys<4>) against the leaf's
// rows, which the index holds in panels of 8; the keys reach the sink with positions in EGO order
// (the caller maps them back).
template <class Sink>
class EgoLeafRows {
 public:
  static constexpr int kGroup = 4;
  EgoLeafRows(const EgoJoin& j, std::atomic<std::uint64_t>& evaluated, Sink& sink)
      : j_(j), A_(*j.a), B_(j.partners()), stride_(j.leaf), keys_(kGroup * j.leaf), total_(evaluated), sink_(sink) {}
  void block(const EgoItem& item) {
    const EgoNode& na = A_.nodes()[item.a];
    const EgoNode& nb = B_.nodes()[item.b];
    const bool triangle = j_.is_auto && item.a == item.b;
    const int d = A_.dim();
    anchors_.clear();
    if (triangle) {
      for (std::uint32_t p = na.begin; p < na.end; ++p) anchors_.push_back(p);
    } else {
      rows_near_box(A_.panels(item.a), na.size(), d, B_.lo(item.b), B_.hi(item.b), j_.hi, na.begin, anchors_);
    }
    if (anchors_.empty()) return;
    const auto natural = [](double k) { return natural_of_vector_key(Metric::Euclidean, k); };
    for (std::size_t g = 0; g < anchors_.size(); g += kGroup) {
      // Past the last anchor the last repeats (its keys unused); on a triangle the group's first
      // anchor has the most partners, j > i.
      const double* rows[kGroup];
      for (int q = 0; q < kGroup; ++q) rows[q] = A_.row(anchors_[std::min(g + q, anchors_.size() - 1)]);
      // From the first partner of the panel of 8 that holds the first one needed.
      const std::size_t first = triangle ? anchors_[g] + 1 : nb.begin;
      if (first >= nb.end) break;
      const std::size_t j0 = nb.begin + (first - nb.begin) / 8 * 8;
      panel_keys<kGroup>(Metric::Euclidean, d, B_.panels(item.b) + (j0 - nb.begin) * static_cast<std::size_t>(d), rows,
                         nb.end - j0, keys_.data(), stride_);
      for (std::size_t q = 0; q < kGroup && g + q < anchors_.size(); ++q) {
        const std::size_t i = anchors_[g + q], js = triangle ? i + 1 : nb.begin;
        if (js >= nb.end) continue;
        sink_.consume(i, js, keys_.data() + q * stride_ + (js - j0), nb.end - js, natural);
        evaluated_ += nb.end - js;
      }
    }
  }
  void finish() { total_.fetch_add(evaluated_, std::memory_order_relaxed); }

 private:
  const EgoJoin& j_;
  const EgoIndex& A_;
  const EgoIndex& B_;
  std::size_t stride_;
  std::vector<double> keys_;
  std::vector<std::uint32_t> anchors_;
  std::uint64_t evaluated_ = 0;
  std::atomic<std::uint64_t>& total_;
  Sink& sink_;
};

}  // namespace twobody::cpu
