#include "twobody/detail/engine/chunked_run.hpp"

#include <algorithm>
#include <deque>
#include <future>
#include <mutex>
#include <string>
#include <vector>

#include "twobody/detail/engine/exact_sums.hpp"
#include "twobody/detail/engine/pair_limit.hpp"
#include "twobody/detail/engine/reductions.hpp"
#include "twobody/error.hpp"

namespace twobody {
namespace {

// A copy of points [first, first + n) with their weights and labels.
PointSet slice(const PointSet& p, std::size_t first, std::size_t n) {
  PointSet s(p.dim(), n);
  for (int d = 0; d < p.dim(); ++d) std::copy_n(p.coord(d).begin() + first, n, s.coord(d).begin());
  if (p.has_weights()) s.set_weights({p.weights().begin() + first, p.weights().begin() + first + n});
  if (p.has_regions()) s.set_regions({p.regions().begin() + first, p.regions().begin() + first + n});
  return s;
}

}  // namespace

Result run_in_chunks(const Plan& plan, std::size_t chunk, const std::function<Result(const Plan&)>& run_one, int in_flight) {
  if (chunk == 0) throw Error(ErrorKind::Internal, "run_in_chunks: a chunk of zero points");
  const PointSet& A = *plan.a;
  const PointSet& B = *plan.b;
  const bool is_auto = plan.is_auto();
  auto cut = [&](const PointSet& p) {
    std::vector<std::size_t> first;
    for (std::size_t f = 0; f < p.size(); f += chunk) first.push_back(f);
    if (first.empty()) first.push_back(0);
    return first;
  };
  const std::vector<std::size_t> fa = cut(A), fb = is_auto ? fa : cut(B);
  std::vector<PointSet> ca, cb;
  for (std::size_t f : fa) ca.push_back(slice(A, f, std::min(chunk, A.size() - f)));
  if (!is_auto)
    for (std::size_t f : fb) cb.push_back(slice(B, f, std::min(chunk, B.size() - f)));
  const std::vector<PointSet>& chunks_b = is_auto ? ca : cb;

  struct Job {
    std::size_t p, q;
  };
  std::vector<Job> jobs;
  for (std::size_t p = 0; p < fa.size(); ++p)
    for (std::size_t q = is_auto ? p : 0; q < fb.size(); ++q) jobs.push_back({p, q});

  Statistic cross = *plan.stat;
  cross.traversal = Traversal::Cross;
  Result r = empty_result(*plan.stat, A.size(), is_auto ? 0 : B.size());
  // Pair sinks and progress are called from the runs' threads: one at a time.
  std::mutex callbacks;
  std::uint64_t listed = 0;
  double shown = 0;  // progress never goes back (chunk pairs in flight report their own fractions)
  std::string last_plan;
  const auto merge = [&](std::size_t n, const Result& s) {
    const auto [p, q] = jobs[n];
    PiecePlacement where;
    where.a.offset = fa[p];
    where.b.offset = fb[q];
    where.whole_is_auto = is_auto;
    where.piece_is_auto = is_auto && p == q;
    merge_piece(*plan.stat, r, s, where);
    if (!plan.pair_sink && r.pairs.size() > plan.max_pairs)
      throw_pair_limit(plan.max_pairs);
    r.info.threads = s.info.threads;
    last_plan = s.info.plan;
  };
  std::vector<Plan> subs(jobs.size(), plan);
  const auto start = [&](std::size_t n) {
    const auto [p, q] = jobs[n];
    const std::size_t a0 = fa[p], b0 = fb[q];
    Plan& sub = subs[n];
    sub.stat = is_auto && p == q ? plan.stat : &cross;
    sub.a = &ca[p];
    sub.b = is_auto && p == q ? &ca[p] : &chunks_b[q];
    sub.resident = nullptr;  // (its set is the whole `a`, not a chunk)
    if (plan.progress)
      sub.progress = [&, n](double f) {
        std::lock_guard<std::mutex> lock(callbacks);
        shown = std::max(shown, (static_cast<double>(n) + f) / static_cast<double>(jobs.size()));
        plan.progress(shown);
      };
    if (plan.pair_sink)
      sub.pair_sink = [&, a0, b0](std::span<const PairRecord> batch) {
        std::vector<PairRecord> shifted(batch.begin(), batch.end());
        for (auto& pr : shifted) {
          pr.i += a0;
          pr.j += b0;
        }
        std::lock_guard<std::mutex> lock(callbacks);
        listed += shifted.size();
        if (listed > plan.max_pairs)
          throw_pair_limit(plan.max_pairs);
        plan.pair_sink(shifted);
      };
    const Plan* one = &sub;
    return std::async(in_flight > 1 ? std::launch::async : std::launch::deferred, [&run_one, one] { return run_one(*one); });
  };
  // Up to `in_flight` chunk pairs run at once; merged in their order, so sums are those of one at a time.
  std::deque<std::pair<std::size_t, std::future<Result>>> running;
  for (std::size_t n = 0; n < jobs.size(); ++n) {
    while (static_cast<int>(running.size()) >= std::max(1, in_flight)) {
      merge(running.front().first, running.front().second.get());
      running.pop_front();
    }
    running.emplace_back(n, start(n));
  }
  while (!running.empty()) {
    merge(running.front().first, running.front().second.get());
    running.pop_front();
  }
  std::sort(r.pairs.begin(), r.pairs.end(), pair_order);
  r.exact.grids = plan.grids;
  round_exact_sums(r);
  r.info.n_a = A.size();
  r.info.n_b = is_auto ? 0 : B.size();
  r.info.plan = "in chunks of at most " + std::to_string(chunk) + " points: " + std::to_string(jobs.size()) +
                " launches (" + std::to_string(std::max(1, in_flight)) + " at a time) over " + std::to_string(fa.size()) + (is_auto ? "" : " x " + std::to_string(fb.size())) +
                " chunks; the last: " + last_plan;
  return r;
}

}  // namespace twobody
