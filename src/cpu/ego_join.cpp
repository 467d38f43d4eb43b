// The EGO join's choice and recursion (ego_join.hpp).
#include "twobody/detail/cpu/ego_join.hpp"

#include <fmt/format.h>
#include <omp.h>

#include <chrono>
#include <cmath>
#include <cstdlib>
#include <limits>

#include "twobody/detail/engine/memory.hpp"
#include "twobody/error.hpp"

namespace twobody::cpu {

EgoPolicy EgoPolicy::current(const std::string& path) {
  EgoPolicy p;
  if (path == "brute") {
    p.force = Force::Brute;
    p.forced_by = "--path brute";
  } else if (path == "grid") {
    p.force = Force::Ego;
    p.forced_by = "--path grid";
  }
  if (const char* e = std::getenv("TWOBODY_CPU_JOIN")) {
    const std::string v = e;
    if (v != "auto" && v != "ego" && v != "brute")
      throw Error(ErrorKind::Config, fmt::format("TWOBODY_CPU_JOIN must be auto, ego or brute, not '{}'", v));
    p.force = v == "ego" ? Force::Ego : v == "brute" ? Force::Brute : Force::Auto;
    p.forced_by = v == "auto" ? "" : "TWOBODY_CPU_JOIN=" + v;
  }
  if (const char* e = std::getenv("TWOBODY_EGO_LEAF")) {
    char* end = nullptr;
    const long v = std::strtol(e, &end, 10);
    if (!*e || *end || v < 8 || v > 4096)
      throw Error(ErrorKind::Config, "TWOBODY_EGO_LEAF must be a whole number from 8 to 4096");
    p.leaf = static_cast<std::size_t>(v);
  }
  return p;
}

std::string EgoPolicy::overrides() const {
  std::string s = forced_by;
  if (leaf != EgoPolicy{}.leaf) s += fmt::format("{}TWOBODY_EGO_LEAF={}", s.empty() ? "" : ", ", leaf);
  return s;
}

namespace {

// Super-EGO's recursion on pairs of nodes, over OpenMP tasks: each thread lists the leaf pairs it
// keeps. It stops (complete = false) once it has listed `limit` of them.
class Recursion {
 public:
  Recursion(EgoJoin& j, std::uint64_t limit, int threads)
      : j_(j), A_(*j.a), B_(j.partners()), limit_(limit), items_(static_cast<std::size_t>(threads)),
        visits_(static_cast<std::size_t>(threads), 0) {}

  void run(int threads) {
#pragma omp parallel num_threads(threads)
#pragma omp single
    visit(0, 0);
    for (auto& list : items_) {
      j_.items.insert(j_.items.end(), list.begin(), list.end());
      list = {};
    }
    for (std::uint64_t v : visits_) j_.node_pairs += v;
    j_.candidates = kept_.load();
    j_.complete = !over_.load();
  }

 private:
  // Below this many pairs a pair of nodes is recursed into by the task that found it.
  static constexpr std::uint64_t kTaskPairs = std::uint64_t{1} << 22;

  void visit(std::uint32_t a, std::uint32_t b) {
    if (over_.load(std::memory_order_relaxed)) return;
    const int t = omp_get_thread_num();
    ++visits_[static_cast<std::size_t>(t)];
    const EgoNode& na = A_.nodes()[a];
    const EgoNode& nb = B_.nodes()[b];
    const bool self = j_.is_auto && a == b;
    if (!self && box_key_bound(A_.lo(a), A_.hi(a), B_.lo(b), B_.hi(b), A_.dim(), j_.hi) >= j_.hi) return;
    const std::uint64_t pairs = self ? std::uint64_t{na.size()} * (na.size() - 1) / 2 : std::uint64_t{na.size()} * nb.size();
    if (pairs == 0) return;
    if (na.leaf() && nb.leaf()) {
      items_[static_cast<std::size_t>(t)].push_back({a, b});
      kept_.fetch_add(pairs, std::memory_order_relaxed);
      if (listed_.fetch_add(1, std::memory_order_relaxed) + 1 >= limit_) over_.store(true, std::memory_order_relaxed);
      return;
    }
    if (self) {
      // A node with itself: its halves with themselves and with each other, each pair once.
      const auto c = static_cast<std::uint32_t>(na.child);
      const std::uint64_t h0 = A_.nodes()[c].size(), h1 = A_.nodes()[c + 1].size();
      go(c, c, h0 * h0 / 2);
      go(c, c + 1, h0 * h1);
      go(c + 1, c + 1, h1 * h1 / 2);
      return;
    }
    // Split the larger node (Super-EGO splits the longer sequence) where its cells change.
    if (!na.leaf() && (nb.leaf() || na.size() >= nb.size())) {
      const auto c = static_cast<std::uint32_t>(na.child);
      go(c, b, pairs / 2);
      go(c + 1, b, pairs / 2);
    } else {
      const auto c = static_cast<std::uint32_t>(nb.child);
      go(a, c, pairs / 2);
      go(a, c + 1, pairs / 2);
    }
  }

  // A pair of nodes of `size` pairs: a task of its own when large (a member function, not a
  // lambda: the task must not outlive a closure on its parent's stack).
  void go(std::uint32_t x, std::uint32_t y, std::uint64_t size) {
    if (size >= kTaskPairs) {
#pragma omp task firstprivate(x, y)
      visit(x, y);
    } else {
      visit(x, y);
    }
  }

  EgoJoin& j_;
  const EgoIndex& A_;
  const EgoIndex& B_;
  std::uint64_t limit_;
  std::vector<std::vector<EgoItem>> items_;  // per thread
  std::vector<std::uint64_t> visits_;        // per thread
  std::atomic<std::uint64_t> kept_{0}, listed_{0};
  std::atomic<bool> over_{false};
};

// Why the EGO join cannot serve the plan ("" when it can).
std::string refusal(const VectorPlan& plan, const EgoPolicy& policy) {
  const Statistic& s = *plan.stat;
  if (s.metric != Metric::Euclidean) return "the EGO join prunes Euclidean distances only";
  const OutputKind out = s.output();
  if (out != OutputKind::Reduction && out != OutputKind::PerPoint && out != OutputKind::PairList)
    return "the EGO join serves the join's outputs (totals, per-vector counts, pairs)";
  if (std::max(plan.a->size(), plan.b->size()) > std::numeric_limits<std::uint32_t>::max())
    return "the EGO join indexes at most 2^32 - 1 vectors a set";
  if (policy.force == EgoPolicy::Force::Ego) return {};
  const int d = plan.a->dim();
  if (d > policy.max_auto_dim)
    return fmt::format("{} dimensions: the EGO join is considered up to {} (boxes of eps separate little beyond)", d,
                       policy.max_auto_dim);
  if (plan.a->size() + (plan.is_auto() ? 0 : plan.b->size()) < 4 * policy.leaf) return "too few vectors for the EGO join to pay";
  return {};
}

// The pairs the leaf evaluator will compute: those of the anchors that the partner leaf's box does
// not rule out, counted on a sample of the leaf pairs (those whose hash falls in one of 64, or all
// of them when there are few) and scaled by the sample's share of the leaf pairs' pairs. The
// sample is a function of the pairs of nodes alone, so the prediction does not depend on the
// threads.
std::uint64_t predict_evaluated(const EgoJoin& j) {
  const EgoIndex& A = *j.a;
  const EgoIndex& B = j.partners();
  const bool all = j.items.size() < 4096;
  std::uint64_t kept = 0, sampled = 0;
  std::vector<std::uint32_t> anchors;
  for (const EgoItem& it : j.items) {
    const std::uint64_t h = (it.a * 0x9E3779B97F4A7C15ull) ^ (it.b * 0xC2B2AE3D27D4EB4Full);
    if (!all && (h * 0xD6E8FEB86659FD93ull) >> 58 != 0) continue;
    const EgoNode& na = A.nodes()[it.a];
    const EgoNode& nb = B.nodes()[it.b];
    if (j.is_auto && it.a == it.b) {
      const std::uint64_t p = std::uint64_t{na.size()} * (na.size() - 1) / 2;
      kept += p;
      sampled += p;
      continue;
    }
    anchors.clear();
    rows_near_box(A.panels(it.a), na.size(), A.dim(), B.lo(it.b), B.hi(it.b), j.hi, na.begin, anchors);
    kept += anchors.size() * std::uint64_t{nb.size()};
    sampled += std::uint64_t{na.size()} * nb.size();
  }
  return sampled == 0 ? 0
                      : static_cast<std::uint64_t>(static_cast<double>(j.candidates) * static_cast<double>(kept) /
                                                   static_cast<double>(sampled));
}

std::string percent(std::uint64_t part, std::uint64_t whole) {
  return fmt::format("{:.3g}%", 100.0 * static_cast<double>(part) / static_cast<double>(std::max<std::uint64_t>(whole, 1)));
}

std::string ego_text(const EgoJoin& j, std::uint64_t brute) {
  if (!j.complete)
    return fmt::format("more than {} leaf pairs (stopped there: the list would take too much memory), with {} pairs so far",
                       j.items.size(), j.candidates);
  return fmt::format(
      "{} leaf pairs hold {} of the brute force's {} pairs ({}), about {} ({}) once the anchors beyond eps of a partner "
      "leaf's box are skipped (sampled); {} node pairs visited, cells over {} of {} dimensions, {} + {} leaves, index "
      "and recursion {:.3f} s",
      j.items.size(), j.candidates, brute, percent(j.candidates, brute), j.predicted, percent(j.predicted, brute),
      j.node_pairs, j.grid.dims.size(), j.a->dim(), j.a->leaves(), j.b ? j.b->leaves() : 0, j.seconds);
}

}  // namespace

EgoChoice choose_ego(const VectorPlan& plan) {
  EgoChoice c;
  const EgoPolicy policy = EgoPolicy::current(plan.path);
  const std::uint64_t brute = pair_total(plan.a->size(), plan.b->size(), plan.is_auto());
  if (policy.force == EgoPolicy::Force::Brute) {
    c.why = fmt::format("brute force (requested: {})", policy.forced_by);
    return c;
  }
  if (const std::string no = refusal(plan, policy); !no.empty()) {
    c.why = "brute force: " + no;
    return c;
  }
  const auto t0 = std::chrono::steady_clock::now();
  auto j = std::make_unique<EgoJoin>();
  j->is_auto = plan.is_auto();
  j->hi = plan.edges.hi();
  j->leaf = policy.leaf;
  const VectorSet* second = plan.is_auto() ? nullptr : plan.b;
  // The cells' width is eps itself (hi is the next double above eps², as key space states it).
  j->grid = EgoGrid::make(*plan.a, second, std::sqrt(j->hi), plan.threads);
  if (!j->grid.finite) {
    c.why = "brute force: values that are not finite (the EGO join's boxes need finite rows)";
    return c;
  }
  const int d = plan.a->dim();
  const double bytes = EgoIndex::bytes(plan.a->size(), d, j->grid.dims.size(), policy.leaf) +
                       (second ? EgoIndex::bytes(second->size(), d, j->grid.dims.size(), policy.leaf) : 0.0);
  if (bytes > 0.4 * physical_memory_bytes()) {
    c.why = fmt::format("brute force: the EGO join's sorted copy and trees would take {:.3g} GB", bytes / 1e9);
    return c;
  }
  j->a = std::make_unique<EgoIndex>(*plan.a, j->grid, policy.leaf, plan.threads);
  if (second) j->b = std::make_unique<EgoIndex>(*second, j->grid, policy.leaf, plan.threads);
  // A list of leaf pairs beyond this many (16 M, 128 MB) is not worth its memory: at 10^5 rows
  // even no pruning at all lists about 1.5 M.
  constexpr std::uint64_t kMaxItems = std::uint64_t{1} << 24;
  Recursion(*j, kMaxItems, plan.threads).run(plan.threads);
  if (j->complete) j->predicted = predict_evaluated(*j);
  j->seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  // Both costs in the brute force's pairs, from here on (the index is already paid for).
  const double ego_cost = static_cast<double>(j->predicted) * policy.pair_cost +
                          static_cast<double>(j->items.size()) * policy.item_cost;
  const std::string text = ego_text(*j, brute);
  const std::string model = fmt::format("(pairs x {} + leaf pairs x {})", policy.pair_cost, policy.item_cost);
  if (!j->complete) {
    c.why = "brute force: the EGO join would list " + text;
    return c;
  }
  if (policy.force == EgoPolicy::Force::Ego) {
    c.why = fmt::format("EGO join (requested: {}): {}", policy.forced_by, text);
  } else if (ego_cost < static_cast<double>(brute)) {
    c.why = fmt::format("EGO join: {}; cost {:.3g} < the brute force's {} {}", text, ego_cost, brute, model);
  } else {
    c.why = fmt::format("brute force: in the EGO join {}; cost {:.3g} >= the brute force's {} {}", text, ego_cost, brute, model);
    return c;
  }
  c.chosen = true;
  c.join = std::move(j);
  return c;
}

std::string describe_ego(const VectorPlan& plan) {
  const EgoPolicy policy = EgoPolicy::current(plan.path);
  const std::string overrides = policy.overrides();
  return fmt::format(
      "EGO join (Super-EGO): rows sorted by their cells of width eps (the dimensions of two cells or more, by "
      "decreasing variance), trees of ranges split where the cells change, leaves of at most {} rows with float64 "
      "boxes; pairs of ranges whose boxes bound the rule's key beyond eps dropped, leaf pairs listed over OpenMP "
      "tasks; in a leaf pair, the anchors beyond eps of the partners' box skipped, the others through the brute "
      "force's kernel (4 anchors x 8 partners in registers, the same keys){}",
      policy.leaf, overrides.empty() ? "" : "; " + overrides);
}

}  // namespace twobody::cpu
