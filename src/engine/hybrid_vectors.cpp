// --backend hybrid over vectors (hybrid_run.hpp): joins and k-NN in bands of the first set's rows.
#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <mutex>

#include "twobody/detail/engine/hybrid_run.hpp"
#include "twobody/detail/engine/hybrid_workers.hpp"
#include "twobody/detail/engine/pair_limit.hpp"
#include "twobody/detail/engine/planner.hpp"
#include "twobody/detail/engine/vector_bands.hpp"

namespace twobody {

namespace {

bool splits(const Statistic& s) {
  const OutputKind out = s.output();
  return out == OutputKind::Reduction || out == OutputKind::PerPoint || out == OutputKind::PairList ||
         out == OutputKind::Nearest;
}

std::string not_split_note(const Statistic& s) {
  return fmt::format("hybrid: splits joins (counts, per-vector counts, pairs) and k-NN; a vector {} runs whole on the "
                     "auto backend",
                     to_string(s.output()));
}

// Why the GPU's backend takes no bands of `s`: it does not run the statistic, or not in bands.
std::string refuses(const Backend& gpu, const Statistic& s) {
  const std::string why = gpu.refuses_vectors(s);
  return why.empty() ? gpu.refuses_bands(s) : why;
}

// The queue's units: bands of `rows` rows, in row order (heaviest first: a self-join's rows get
// lighter down the set, a cross join's and a k-NN's weigh the same).
struct VectorUnits {
  std::size_t rows = 0;
  std::vector<double> work;
  RowBand band(const HybridQueue::Take& t, std::size_t n) const { return {t.first * rows, std::min(n, t.last * rows)}; }
};

VectorUnits vector_units(const VectorPlan& plan, const HybridPolicy& policy) {
  VectorUnits u;
  const std::size_t n = plan.a->size();
  u.rows = policy.band_rows ? policy.band_rows : std::max<std::size_t>(16, (n + 4095) / 4096);
  for (std::size_t r0 = 0; r0 < n; r0 += u.rows) u.work.push_back(band_pairs(plan, {r0, std::min(n, r0 + u.rows)}));
  return u;
}

// A CPU band holds rows enough for 16 a thread (the k-NN gives each thread blocks of rows), so
// that its first band keeps the whole team busy and its measured rate is the team's.
void give_every_thread_a_row_block(HybridCrew& crew, const VectorUnits& units) {
  for (HybridWorker& w : crew.workers)
    if (w.end == HybridQueue::End::Light)
      w.min_units = (16 * static_cast<std::size_t>(w.threads) + units.rows - 1) / units.rows;
}

// The plan before the run: the planner's, the crew and the queue, and how each worker runs a band.
std::string hybrid_plan(const VectorPlan& plan, const HybridCrew& crew, const HybridPolicy& policy,
                        const VectorUnits& units) {
  std::string s = fmt::format("backend: hybrid\n{}\n{}\nhybrid: {} units of {} rows of the first set; a band is rows "
                              "r0..r1 of it against {}",
                              plan.explanation, describe_crew(crew, policy), units.work.size(), units.rows,
                              plan.stat->output() == OutputKind::Nearest ? "every partner (k-NN lists are whole per band)"
                              : plan.is_auto() ? "the rows after each (each unordered pair in one band)"
                                               : "every row of the second set");
  VectorPlan band = plan;
  band.band = {0, std::min(plan.a->size(), units.rows)};
  for (const HybridWorker& w : crew.workers) {
    band.threads = w.threads;
    s += fmt::format("\n{}: {}", w.name, w.make_backend()->describe_vectors(band));
  }
  return s;
}

}  // namespace

Result run_hybrid(const Statistic& stat, const VectorSet& a, const VectorSet* b, const RunOptions& opt) {
  const auto t0 = std::chrono::steady_clock::now();
  const VectorPlan plan = make_vector_plan(stat, a, b, opt);
  if (!splits(stat)) return run_whole(stat, a, b, opt, "auto", not_split_note(stat));
  const HybridPolicy policy = HybridPolicy::current();
  HybridCrew crew = hybrid_crew(opt, policy, [&](const Backend& g) { return refuses(g, stat); });
  if (crew.workers.size() < 2) {
    Result r = run_whole(stat, a, b, opt, "cpu", describe_crew(crew, policy));
    r.info.workers = {WorkerShare{crew.workers.back().name, 1, a.size(), r.info.pairs_evaluated, r.info.seconds}};
    return r;
  }
  const VectorUnits units = vector_units(plan, policy);
  give_every_thread_a_row_block(crew, units);
  HybridQueue queue(units.work);
  const std::size_t n = a.size();
  Result whole = empty_result(stat, n, b ? b->size() : 0);
  std::mutex merge;
  std::vector<std::string> last_plan(crew.workers.size());
  SharedPairSink shared(opt.pair_sink, opt.max_pairs, "eps");
  const BandRunner run_band = [&](const HybridWorker& w, Backend& backend, const HybridQueue::Take& take,
                                  const std::function<void(double)>& progress) {
    VectorPlan piece_plan = plan;
    piece_plan.band = units.band(take, n);
    piece_plan.threads = w.threads;
    piece_plan.progress = progress;
    const PiecePlacement where = band_placement(piece_plan);
    if (opt.pair_sink) piece_plan.pair_sink = shared.for_piece(where);
    const Result piece = backend.run_vectors(piece_plan);
    std::lock_guard<std::mutex> lock(merge);
    merge_piece(stat, whole, piece, where);
    if (!opt.pair_sink && whole.pairs.size() > opt.max_pairs) throw_pair_limit(opt.max_pairs, "eps");
    last_plan[static_cast<std::size_t>(&w - crew.workers.data())] = piece.info.plan;
    return BandTally{piece_plan.band.size(), piece.info.pairs_evaluated};
  };
  const std::vector<WorkerShare> shares = drive_queue(crew.workers, queue, run_band, opt.progress);
  std::string text = hybrid_plan(plan, crew, policy, units);
  for (std::size_t w = 0; w < crew.workers.size(); ++w)
    if (!last_plan[w].empty()) text += fmt::format("\n{}, its last band ran: {}", crew.workers[w].name, last_plan[w]);
  finish_hybrid(whole, text, shares, t0, n, b ? b->size() : 0, opt);
  return whole;
}

std::string explain_hybrid(const Statistic& stat, const VectorSet& a, const VectorSet* b, const RunOptions& opt) {
  const VectorPlan plan = make_vector_plan(stat, a, b, opt);
  if (!splits(stat)) {
    RunOptions o = opt;
    o.backend = "auto";
    return not_split_note(stat) + "\n" + explain(stat, a, b, o);
  }
  const HybridPolicy policy = HybridPolicy::current();
  HybridCrew crew = hybrid_crew(opt, policy, [&](const Backend& g) { return refuses(g, stat); });
  if (crew.workers.size() < 2) {
    RunOptions o = opt;
    o.backend = "cpu";
    return describe_crew(crew, policy) + "\n" + explain(stat, a, b, o);
  }
  const VectorUnits units = vector_units(plan, policy);
  give_every_thread_a_row_block(crew, units);
  return hybrid_plan(plan, crew, policy, units);
}

}  // namespace twobody
