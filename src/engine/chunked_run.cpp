#include "twobody/detail/engine/chunked_run.hpp"

#include <algorithm>
#include <deque>
#include <future>
#include <mutex>
#include <string>
#include <vector>

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

template <class T>
void add_into(std::vector<T>& to, const std::vector<T>& from, std::size_t offset = 0) {
  if (from.empty()) return;
  if (to.size() < offset + from.size()) to.resize(offset + from.size());
  for (std::size_t k = 0; k < from.size(); ++k) to[offset + k] += from[k];
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
  const OutputKind out = plan.stat->output;
  Result r;
  r.output = out;
  if (out == OutputKind::Matrix) {
    r.rows = A.size();
    r.cols = B.size();
    r.matrix.assign(r.rows * r.cols, 0.0);
  }
  // Pair sinks and progress are called from the runs' threads: one at a time.
  std::mutex callbacks;
  std::uint64_t listed = 0;
  double shown = 0;  // progress never goes back (chunk pairs in flight report their own fractions)
  std::string last_plan;
  const auto merge = [&](std::size_t n, const Result& s) {
    const auto [p, q] = jobs[n];
    const std::size_t a0 = fa[p], b0 = fb[q];
    add_into(r.counts, s.counts);
    add_into(r.weighted, s.weighted);
    r.regions = std::max(r.regions, s.regions);
    add_into(r.region_counts, s.region_counts);
    add_into(r.region_weighted, s.region_weighted);
    add_into(r.separation_sum, s.separation_sum);
    add_into(r.log_separation_sum, s.log_separation_sum);
    for (auto pr : s.pairs) {
      pr.i += a0;
      pr.j += b0;
      r.pairs.push_back(pr);
    }
    if (!plan.pair_sink && r.pairs.size() > plan.max_pairs)
      throw Error(ErrorKind::Resource, "pair list exceeds the limit of " + std::to_string(plan.max_pairs) +
                                           " pairs; narrow the range or raise RunOptions::max_pairs");
    if (out == OutputKind::PerPoint) {
      // Auto: both ends of a pair belong to the one set; its chunk-pair run reports them as a
      // (chunk p) and, when p != q, b (chunk q).
      add_into(r.per_point_a.counts, s.per_point_a.counts, a0);
      add_into(r.per_point_a.weighted, s.per_point_a.weighted, a0);
      auto& to_b = is_auto ? r.per_point_a : r.per_point_b;
      add_into(to_b.counts, s.per_point_b.counts, b0);
      add_into(to_b.weighted, s.per_point_b.weighted, b0);
    }
    if (out == OutputKind::Matrix) {
      for (std::size_t i = 0; i < s.rows; ++i)
        std::copy_n(s.matrix.begin() + i * s.cols, s.cols, r.matrix.begin() + (a0 + i) * r.cols + b0);
      // Auto: the matrix is symmetric; the block below the diagonal is the transpose.
      if (is_auto && p != q)
        for (std::size_t i = 0; i < s.rows; ++i)
          for (std::size_t j = 0; j < s.cols; ++j) r.matrix[(b0 + j) * r.cols + a0 + i] = s.matrix[i * s.cols + j];
    }
    r.info.pairs_evaluated += s.info.pairs_evaluated;
    r.info.pairs_settled_fp64 += s.info.pairs_settled_fp64;
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
          throw Error(ErrorKind::Resource, "pair list exceeds the limit of " + std::to_string(plan.max_pairs) +
                                               " pairs; narrow the range or raise RunOptions::max_pairs");
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
  if (out == OutputKind::PerPoint) {
    r.per_point_a.counts.resize(A.size());
    if (!is_auto) r.per_point_b.counts.resize(B.size());
  }
  std::sort(r.pairs.begin(), r.pairs.end(),
            [](const PairRecord& x, const PairRecord& y) { return x.i != y.i ? x.i < y.i : x.j < y.j; });
  r.info.n_a = A.size();
  r.info.n_b = is_auto ? 0 : B.size();
  r.info.plan = "in chunks of at most " + std::to_string(chunk) + " points: " + std::to_string(jobs.size()) +
                " launches (" + std::to_string(std::max(1, in_flight)) + " at a time) over " + std::to_string(fa.size()) + (is_auto ? "" : " x " + std::to_string(fb.size())) +
                " chunks; the last: " + last_plan;
  return r;
}

}  // namespace twobody
