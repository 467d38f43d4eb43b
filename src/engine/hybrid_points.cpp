// --backend hybrid over points (hybrid_run.hpp): the MPI decomposition's slab pairs (pair_jobs.hpp)
// on one queue, heaviest first, each an ordinary run on the worker's backend.
#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <mutex>
#include <numeric>
#include <optional>

#include "twobody/detail/engine/devices.hpp"
#include "twobody/detail/engine/exact_sums.hpp"
#include "twobody/detail/engine/hybrid_run.hpp"
#include "twobody/detail/engine/hybrid_workers.hpp"
#include "twobody/detail/engine/pair_jobs.hpp"
#include "twobody/detail/engine/pair_limit.hpp"
#include "twobody/detail/engine/planner.hpp"

namespace twobody {

namespace {

const char* const kMatrixNote = "hybrid: a matrix is not split (every pair is one entry of it); it runs whole on the auto backend";

// The decomposition, its jobs heaviest first (ties by job), and the slabs' points, made once.
struct PointUnits {
  dist::Decomposition d;
  std::vector<std::size_t> order;  // queue position -> job
  std::vector<double> work;        // estimated pairs, in queue order
  std::vector<PointSet> slabs_a, slabs_b;
};

// Enough slabs that the CPU's light end and the GPU's heavy end both get several, few enough that
// the jobs (every slab pair within the reach: up to quadratic in the slabs when the reach spans
// many of them) stay large. 8 a thread (256 on the device's 64 cores) made a 6·10^4-point 8-D
// join take 300 s on an H200 in thousands of tiny GPU runs.
std::size_t slab_count(const RunOptions& opt, const HybridPolicy& policy) {
  if (policy.slabs) return policy.slabs;
  return static_cast<std::size_t>(std::clamp(run_threads(opt), 16, 48));
}

PointUnits point_units(const Statistic& stat, const PointSet& a, const PointSet* b, std::size_t slabs, bool make) {
  PointUnits u;
  u.d = dist::decompose(stat, a, b, 1, static_cast<int>(slabs));
  u.order.resize(u.d.jobs.size());
  std::iota(u.order.begin(), u.order.end(), std::size_t{0});
  std::stable_sort(u.order.begin(), u.order.end(),
                   [&](std::size_t x, std::size_t y) { return u.d.jobs[x].estimate > u.d.jobs[y].estimate; });
  for (std::size_t j : u.order) u.work.push_back(u.d.jobs[j].estimate);
  if (make) {
    for (std::size_t c = 0; c < u.d.a.chunks(); ++c) u.slabs_a.push_back(u.d.a.make(a, u.d.a.begin[c], u.d.a.begin[c + 1]));
    if (b)
      for (std::size_t c = 0; c < u.d.b.chunks(); ++c)
        u.slabs_b.push_back(u.d.b.make(*b, u.d.b.begin[c], u.d.b.begin[c + 1]));
  }
  return u;
}

std::string hybrid_plan(const Plan& plan, const HybridCrew& crew, const HybridPolicy& policy, const PointUnits& u) {
  const auto autos = std::count_if(u.d.jobs.begin(), u.d.jobs.end(), [](const dist::PairJob& j) { return j.is_auto; });
  return fmt::format(
      "backend: hybrid\n{}\n{}\nhybrid: {} cut into {} slabs along axis {} (about equal counts); {} slab pairs within reach "
      "({} auto, {} cross{}){}, ordered by estimated pairs; each an ordinary run on its worker's backend (the cpu, or "
      "the cuda backend with its fallbacks), on the whole run's sum grids",
      plan.explanation, describe_crew(crew, policy), u.d.cross ? "each set" : "the set", u.d.a.chunks(), u.d.a.axis,
      u.d.jobs.size(), autos, static_cast<std::ptrdiff_t>(u.d.jobs.size()) - autos, u.d.halo_text(),
      u.d.dropped ? fmt::format(", {} more beyond the reach {:.6g} dropped", u.d.dropped, u.d.reach) : "");
}

}  // namespace

Result run_hybrid(const Statistic& stat, const PointSet& a, const PointSet* b, const RunOptions& opt) {
  const auto t0 = std::chrono::steady_clock::now();
  check_devices(opt);
  const Plan plan = make_plan(stat, a, b, opt);
  if (stat.output() == OutputKind::Matrix) return run_whole(stat, a, b, opt, "auto", kMatrixNote);
  const HybridPolicy policy = HybridPolicy::current();
  const HybridCrew crew = hybrid_crew(opt, policy, [&](const Backend& g) { return g.refuses(stat); });
  if (crew.workers.size() < 2) {
    Result r = run_whole(stat, a, b, opt, "cpu", describe_crew(crew, policy));
    r.info.workers = {WorkerShare{crew.workers.back().name, 1, a.size(), r.info.pairs_evaluated, r.info.seconds}};
    return r;
  }
  const PointUnits u = point_units(stat, a, b, slab_count(opt, policy), true);
  HybridQueue queue(u.work);
  RunOptions local = opt;  // each piece: an ordinary run on the whole run's grids, reporting nothing itself
  local.on_plan = nullptr;
  local.pair_sink = nullptr;
  local.progress = nullptr;
  local.resident = nullptr;
  local.sum_grids = plan.grids;
  Result whole = empty_result(stat, a.size(), b ? b->size() : 0);
  whole.exact.grids = plan.grids;
  std::mutex merge;
  std::vector<std::string> last_plan(crew.workers.size());
  SharedPairSink shared(opt.pair_sink, opt.max_pairs, "the range");
  const dist::SlabChunks& sb = u.d.cross ? u.d.b : u.d.a;
  const BandRunner run_band = [&](const HybridWorker& w, Backend&, const HybridQueue::Take& take,
                                  const std::function<void(double)>& progress) {
    BandTally tally;
    double done = 0;
    for (std::size_t q = take.first; q < take.last; ++q) {
      const dist::PairJob& job = u.d.jobs[u.order[q]];
      // A whole slab as made above; a cross job's halo (part of a slab) copied for it alone.
      std::optional<PointSet> halo_a, halo_b;
      const auto part = [&](const dist::SlabChunks& cut, const std::vector<PointSet>& slabs, const PointSet& set,
                            std::size_t c, std::size_t first, std::size_t last,
                            std::optional<PointSet>& halo) -> const PointSet& {
        if (cut.covers(c, first, last)) return slabs[c];
        return halo.emplace(cut.make(set, first, last, std::max(1, w.threads)));
      };
      const PointSet& x = part(u.d.a, u.slabs_a, a, job.a, job.a_first, job.a_last, halo_a);
      const PointSet* y = job.is_auto ? nullptr
                          : u.d.cross ? &part(u.d.b, u.slabs_b, *b, job.b, job.b_first, job.b_last, halo_b)
                                      : &part(u.d.a, u.slabs_a, a, job.b, job.b_first, job.b_last, halo_b);
      Statistic s = stat;
      s.traversal = job.is_auto ? Traversal::Auto : Traversal::Cross;
      PiecePlacement where;  // a job's points are at its positions: order[first + k]
      where.a.order = u.d.a.order.data() + job.a_first;
      where.b.order = sb.order.data() + job.b_first;
      where.whole_is_auto = !u.d.cross;
      where.piece_is_auto = job.is_auto;
      RunOptions o = local;
      o.backend = w.backend;
      o.threads = w.threads;
      o.devices.clear();
      if (w.device >= 0) o.devices = {w.device};  // (a simulated device too: the cpu backend on it)
      if (progress)
        o.progress = [&, est = job.estimate](double f) { progress(take.work > 0 ? (done + f * est) / take.work : f); };
      if (opt.pair_sink) o.pair_sink = shared.for_piece(where);
      const Result piece = run(s, x, y, o);
      done += job.estimate;
      tally.rows += x.size();
      tally.pairs += piece.info.pairs_evaluated;
      std::lock_guard<std::mutex> lock(merge);
      merge_piece(stat, whole, piece, where);
      if (!opt.pair_sink && whole.pairs.size() > opt.max_pairs) throw_pair_limit(opt.max_pairs);
      last_plan[static_cast<std::size_t>(&w - crew.workers.data())] = piece.info.plan;
    }
    return tally;
  };
  const std::vector<WorkerShare> shares = drive_queue(crew.workers, queue, run_band, opt.progress);
  round_exact_sums(whole);
  std::string text = hybrid_plan(plan, crew, policy, u);
  for (std::size_t w = 0; w < crew.workers.size(); ++w)
    if (!last_plan[w].empty()) text += fmt::format("\n{}, its last slab pair ran:\n{}", crew.workers[w].name, last_plan[w]);
  finish_hybrid(whole, text, shares, t0, a.size(), b ? b->size() : 0, opt);
  return whole;
}

std::string explain_hybrid(const Statistic& stat, const PointSet& a, const PointSet* b, const RunOptions& opt) {
  check_devices(opt);
  const Plan plan = make_plan(stat, a, b, opt);
  RunOptions o = opt;
  if (stat.output() == OutputKind::Matrix) {
    o.backend = "auto";
    return std::string(kMatrixNote) + "\n" + explain(stat, a, b, o);
  }
  const HybridPolicy policy = HybridPolicy::current();
  const HybridCrew crew = hybrid_crew(opt, policy, [&](const Backend& g) { return g.refuses(stat); });
  if (crew.workers.size() < 2) {
    o.backend = "cpu";
    return describe_crew(crew, policy) + "\n" + explain(stat, a, b, o);
  }
  return hybrid_plan(plan, crew, policy, point_units(stat, a, b, slab_count(opt, policy), false));
}

}  // namespace twobody
