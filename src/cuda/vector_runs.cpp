// The CUDA backend's statistics over vectors: the kernel chosen — the FP16 Gram tiles
// (gram_tiles.hpp) for Euclidean and cosine counts and pair lists when they apply and pay
// (vector_choice.hpp), else the float64 join kernel (vector_join.hpp) — on the rows as the rule
// reads them, and the result in the engine's layout. Rows are uploaded as stored and prepared on
// the device (gram_rows_device.hpp: promoted, for the cosine distance normalised); the k-NN's
// path is knn_runs.cpp's. Pair lists leave either kernel batch by batch (PairTaker): to
// RunOptions::pair_sink, each batch sorted by (i, j), or into Result::pairs, sorted at the end.
#include <fmt/format.h>
#include <omp.h>

#include <algorithm>
#include <chrono>
#include <future>
#include <optional>

#include "twobody/detail/cuda/cuda_check.hpp"
#include "twobody/detail/cuda/gram_knn_rows_device.hpp"
#include "twobody/detail/cuda/gram_rows_device.hpp"
#include "twobody/detail/cuda/gram_tiles.hpp"
#include "twobody/detail/cuda/tuning_policy.hpp"
#include "twobody/detail/cuda/vector_choice.hpp"
#include "twobody/detail/cuda/vector_join.hpp"
#include "twobody/detail/cuda/vector_grid.hpp"
#include "twobody/detail/cuda/vector_grid_choice.hpp"
#include "twobody/detail/cuda/vector_knn.hpp"
#include "twobody/detail/engine/backend.hpp"
#include "twobody/detail/engine/pair_limit.hpp"

namespace twobody::cuda {

namespace {

// The policy of this run: the run's precision (RunOptions::precision), when not auto, over the
// environment's.
TuningPolicy policy_for(const VectorPlan& plan) {
  TuningPolicy p = TuningPolicy::current();
  using P = TuningPolicy::VectorPrecision;
  if (plan.precision == "fp64") p.vector_precision = P::Fp64;
  if (plan.precision == "fp16") p.vector_precision = P::Fp16;
  return p;
}

// The plan's words for the Gram tiles' partial sums of `fold` MMAs (none for one accumulator).
std::string partial_sums_note(int fold) {
  return fold ? fmt::format(", the products summed in partials of {} MMAs", fold) : std::string();
}

// Whether a join may take the FP16 Gram tiles, and if not why (for the plan). Whether it then
// does is the precision choice's (vector_choice.hpp), and the rows' range is tested as they are
// prepared (gram_rows_device.hpp), so a run may still take the float64 kernel.
struct VectorPath {
  bool gram = false;
  std::string why_not;
};

VectorPath choose_vector_path(const VectorPlan& plan, const TuningPolicy& policy) {
  const Statistic& s = *plan.stat;
  using P = TuningPolicy::VectorPrecision;
  if (policy.vector_precision == P::Fp64)
    return {false, plan.precision == "fp64" ? "precision fp64 requested" : "TWOBODY_VECTOR_PRECISION=fp64"};
  if (s.output() != OutputKind::Reduction && s.output() != OutputKind::PerPoint && s.output() != OutputKind::PairList)
    return {false, "not a count or a pair list"};
  if (std::max(plan.a->size(), plan.b->size()) >= (std::size_t(1) << 31)) return {false, "2^31 rows or more"};
  if (policy.vector_precision == P::Auto && plan.a->dim() < policy.gram_min_dim)
    return {false, fmt::format("d = {} < {}: the float64 kernel is the cheaper", plan.a->dim(), policy.gram_min_dim)};
  return {true, {}};
}

double seconds_since(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

// The batches of a pair list as a kernel drains them: max_pairs checked on the running total, then
// to the plan's sink sorted by (i, j), or kept for Result::pairs.
struct PairTaker {
  const VectorPlan& plan;
  std::vector<PairRecord>& kept;
  std::uint64_t total = 0;
  std::uint64_t batches = 0;
  void operator()(std::vector<PairRecord>& batch) {
    total += batch.size();
    if (total > plan.max_pairs)
      throw_pair_limit(plan.max_pairs, "eps");
    ++batches;
    if (plan.pair_sink) {
      std::sort(batch.begin(), batch.end(), pair_order);
      plan.pair_sink(batch);
    } else {
      kept.insert(kept.end(), batch.begin(), batch.end());
    }
  }
  std::string note() const {
    return fmt::format("; {} pairs in {} batches{}", total, batches, plan.pair_sink ? " to the pair sink" : "");
  }
};

// The join on the vector grid, its rows uploaded; false (and `refusal` set) when the grid gave up
// (too many units), the rows then on the device for the float64 kernel.
bool run_on_grid(const VectorPlan& plan, VectorJoinInput& in, const VectorGridChoice& grid, const TuningPolicy& policy,
                 DeviceGramSets& rows, Result& r, const PairTaker& taker, std::string& refusal) {
  GramPreparation how;
  how.gram = false;
  const auto t0 = std::chrono::steady_clock::now();
  rows = prepare_gram_rows_on_device(*plan.a, plan.is_auto() ? nullptr : plan.b, how);
  const double upload = seconds_since(t0);
  in.device_a = rows.a.rule.get();
  in.device_b = plan.is_auto() ? in.device_a : rows.b.rule.get();
  VectorGridResult v = run_vector_grid(in, grid.geometry, policy);
  if (!v.refusal.empty()) {
    refusal = v.refusal;
    return false;
  }
  const OutputKind out = plan.stat->output();
  if (out == OutputKind::Reduction) r.counts = {v.total};
  if (out == OutputKind::PerPoint) {
    r.per_point_a.counts = std::move(v.count_a);
    r.per_point_b.counts = std::move(v.count_b);
  }
  if (out == OutputKind::PairList && !plan.pair_sink) std::sort(r.pairs.begin(), r.pairs.end(), pair_order);
  const std::uint64_t all = r.info.pairs_evaluated;
  r.info.pairs_evaluated = v.candidates;
  r.info.plan = fmt::format(
      "the vector grid on {}: {} chunks, {} units, {} candidate pairs ({:.3g}% of {}) by the rule in float64; "
      "rows uploaded {:.4f} s, index {:.4f} s, refine {:.4f} s{}; chosen: {}",
      describe_vector_grid_geometry(grid.geometry), v.chunks, v.units, v.candidates,
      100.0 * static_cast<double>(v.candidates) / static_cast<double>(std::max<std::uint64_t>(all, 1)), all, upload,
      v.index_seconds, v.kernel_seconds,
      out == OutputKind::PairList
          ? fmt::format("; a pair buffer of {} pairs, {} launches ({} after a full buffer){}", v.buffer_pairs, v.launches,
                        v.resumed, taker.note())
          : std::string(),
      grid.why);
  return true;
}

}  // namespace

std::string refuses_vectors_on_device(const Statistic& s) {
  switch (s.output()) {
    case OutputKind::Reduction:
    case OutputKind::PerPoint:
    case OutputKind::PairList: return {};
    case OutputKind::Nearest: return refuses_nearest_on_device(s);
    case OutputKind::Matrix: return "has no matrix kernel for vectors yet";
    case OutputKind::Histogram: return "has no histogram kernel for vectors yet";
  }
  return "does not run this statistic over vectors";
}

Result run_vectors_on_device(const VectorPlan& plan) {
  if (plan.banded()) return run_band_on_device(plan);
  const Statistic& s = *plan.stat;
  const OutputKind out = s.output();
  const bool cosine = s.metric == Metric::Cosine;
  if (out == OutputKind::Nearest) return run_nearest_on_device(plan, policy_for(plan));
  VectorJoinInput in;
  in.na = plan.a->size();
  in.nb = plan.b->size();
  in.dim = plan.a->dim();
  in.is_auto = plan.is_auto();
  in.cosine = cosine;
  in.lo = plan.edges.lo();
  in.hi = plan.edges.hi();
  in.max_pairs = plan.max_pairs;
  in.progress = plan.progress;
  in.output = out == OutputKind::PerPoint ? VectorJoinOutput::PerPoint
              : out == OutputKind::PairList ? VectorJoinOutput::Pairs
                                            : VectorJoinOutput::Total;
  Result r;
  r.output = out;
  r.info.threads = plan.threads;
  r.info.pairs_evaluated = pair_total(in.na, in.nb, in.is_auto);
  PairTaker taker{plan, r.pairs};
  if (out == OutputKind::PairList) in.take = [&taker](std::vector<PairRecord>& batch) { taker(batch); };
  const TuningPolicy policy = policy_for(plan);
  in.gram_fold = policy.gram_fold_for(in.dim);
  const VectorPath path = choose_vector_path(plan, policy);
  std::string fallback = path.why_not;
  DeviceGramSets rows;
  std::string grid_note;
  if (!cosine) {
    const VectorGridChoice grid = choose_vector_grid(plan, policy, path.gram);
    if (grid.use) {
      std::string refusal;
      if (run_on_grid(plan, in, grid, policy, rows, r, taker, refusal)) return r;
      fallback = refusal;  // the rows are on the device, for the float64 kernel only
    }
    grid_note = grid.applies ? "; " + grid.why : "; no vector grid: " + grid.why;
  }

  // The rows: uploaded as stored and prepared on the device (the cosine distance's normalised
  // there), while another host thread samples the pairs for the precision choice (the upload from
  // pageable memory holds this one); unless the grid gave up after preparing them.
  PrecisionChoice choice;
  std::string prepared;
  if (!rows.a.rule.size()) {
    double choice_seconds = 0;
    std::future<PrecisionChoice> chosen;
    if (path.gram)
      chosen = std::async(std::launch::async, [&] {
        const auto t = std::chrono::steady_clock::now();
        PrecisionChoice c = choose_precision(*plan.a, plan.is_auto() ? nullptr : plan.b, in.lo, in.hi, s.metric, policy,
                                             plan.threads);
        choice_seconds = seconds_since(t);
        return c;
      });
    GramPreparation how;
    how.gram = path.gram;
    how.cosine = cosine;
    const auto t0 = std::chrono::steady_clock::now();
    try {
      rows = prepare_gram_rows_on_device(*plan.a, plan.is_auto() ? nullptr : plan.b, how);
    } catch (...) {
      if (chosen.valid()) chosen.wait();  // (the sampling thread reads the plan's sets)
      throw;
    }
    const double prepare_seconds = seconds_since(t0);
    if (path.gram) choice = chosen.get();
    prepared =
        fmt::format("; rows {} on the device {:.4f} s (their upload {:.4f} s)",
                    path.gram ? "prepared" : cosine ? "uploaded, promoted and normalised" : "uploaded and promoted",
                    prepare_seconds, rows.upload_seconds);
    if (path.gram) {
      fallback = !rows.refusal.empty() ? rows.refusal : choice.gram ? "" : choice.why;
      prepared += fmt::format(" (the precision choice {:.4f} s on another host thread meanwhile)", choice_seconds);
    }
    in.device_a = rows.a.rule.get();
    in.device_b = plan.is_auto() ? in.device_a : rows.b.rule.get();
  }
  const std::string choice_note = path.gram && fallback.empty() && choice.sampled ? "; chosen by " + choice.why : "";
  // The Euclidean tiles' bound in distance space: the rows' terms, one pass over them on the device.
  std::optional<DeviceGramKnnRows> terms_a, terms_b;
  if (path.gram && fallback.empty() && !cosine && policy.gram_distance_space) {
    const auto t = std::chrono::steady_clock::now();
    terms_a.emplace(make_gram_knn_rows_on_device(rows.a, rows.centre));
    if (!plan.is_auto()) terms_b.emplace(make_gram_knn_rows_on_device(rows.b, rows.centre));
    TWOBODY_CUDA_CHECK(cudaDeviceSynchronize());
    prepared += fmt::format("; the bound in distance space (the rows' N̂, m, ρ) {:.4f} s", seconds_since(t));
  }
  const DeviceGramKnnRows* ka = terms_a ? &*terms_a : nullptr;
  const DeviceGramKnnRows* kb = terms_b ? &*terms_b : nullptr;

  if (path.gram && fallback.empty() && out == OutputKind::PairList) {
    const GramPairsResult g = run_gram_pairs(in, rows.a, plan.is_auto() ? nullptr : &rows.b, policy.gram_pair_buffer, in.take, ka, kb);
    if (!plan.pair_sink) std::sort(r.pairs.begin(), r.pairs.end(), pair_order);
    r.info.pairs_settled_fp64 = g.settled;
    r.info.plan = fmt::format(
        "FP16 Gram tiles on the tensor cores, pair list{}: {} undecided pairs settled in float64, every listed pair's "
        "distance by the rule; a buffer of {} pairs, {} tile launches ({} resuming tiles stopped by a full buffer){}; "
        "kernels {:.4f} s{}{}",
        partial_sums_note(g.fold), g.settled, g.buffer_pairs, g.launches, g.resumed, taker.note(), g.kernel_seconds, prepared,
        choice_note);
    r.info.plan += grid_note;
    return r;
  }
  if (path.gram && fallback.empty()) {
    GramJoinResult g = run_gram_join(in, rows.a, plan.is_auto() ? nullptr : &rows.b, policy.gram_queue_pairs, ka, kb);
    if (out == OutputKind::Reduction) r.counts = {g.total};
    if (out == OutputKind::PerPoint) {
      r.per_point_a.counts = std::move(g.count_a);
      r.per_point_b.counts = std::move(g.count_b);
    }
    r.info.pairs_settled_fp64 = g.settled;
    r.info.plan = fmt::format(
        "FP16 Gram tiles on the tensor cores{}: {} undecided pairs settled in float64{}{}; kernels {:.4f} s{}{}",
        partial_sums_note(g.fold), g.settled,
        g.first_look ? fmt::format(" ({} by the FP16 rows' distance summed in float64 within its bound, the rest by the rule)",
                                   g.first_look)
                     : "",
        g.settled_inline ? fmt::format(" ({} inside the tiles: the settle queue of {} pairs was full)", g.settled_inline,
                                       g.queue_capacity)
                         : "",
        g.kernel_seconds, prepared, choice_note);
    r.info.plan += grid_note;
    return r;
  }
  VectorJoinResult j = run_vector_join(in);
  if (out == OutputKind::Reduction) r.counts = {j.total};
  if (out == OutputKind::PerPoint) {
    r.per_point_a.counts = std::move(j.count_a);
    r.per_point_b.counts = std::move(j.count_b);
  }
  if (out == OutputKind::PairList && !plan.pair_sink) std::sort(r.pairs.begin(), r.pairs.end(), pair_order);
  // Pairs: each slab with pairs is evaluated twice (counted, then written).
  r.info.pairs_evaluated *= out == OutputKind::PairList && j.total > 0 ? 2 : 1;
  r.info.plan = fmt::format("float64 join kernel{}: {:.4f} s{}{}", fallback.empty() ? "" : " (" + fallback + ")",
                            j.kernel_seconds, out == OutputKind::PairList ? taker.note() : "", prepared) +
                grid_note;
  return r;
}

namespace {

std::string describe_all_pairs(const VectorPlan& plan) {
  const TuningPolicy policy = policy_for(plan);
  const VectorPath path = choose_vector_path(plan, policy);
  const std::string overrides = policy.overrides();
  const std::string tail = overrides.empty() ? "" : "; " + overrides;
  const bool list = plan.stat->output() == OutputKind::PairList;
  const std::string to = plan.pair_sink ? "to the pair sink, each batch sorted by (i, j)" : "into the result, sorted at the end";
  const std::string fp64 = fmt::format(
      "float64 on the CUDA cores (the rule itself, no FMA): blocks of 64 x 64 pairs{}, 256 threads with 4 x 4 keys "
      "each, rows staged 16 coordinates at a time in order{}",
      plan.is_auto() ? " (the triangle's tiles only)" : "",
      list ? "; pairs per slab counted, then written into a buffer of the slab's size and drained " + to : "");
  const bool cosine = plan.stat->metric == Metric::Cosine;
  const std::string rows = cosine ? "; rows uploaded as stored, promoted to float64 and normalised on the device"
                                  : "; rows uploaded as stored and promoted to float64 on the device";
  if (!path.gram) return fmt::format("cuda kernel: {} (not the FP16 Gram tiles: {}){}{}", fp64, path.why_not, rows, tail);
  const std::string gram =
      "FP16 Gram tiles on the tensor cores (mma.sync m16n8k16, float32 accumulation" +
      partial_sums_note(policy.gram_fold_for(plan.a->dim())) + "), blocks of 128 x 128 pairs" +
      std::string(plan.is_auto() ? " (the triangle's tiles only)" : "") +
      (cosine ? ", rows uploaded as stored, normalised in float64 (the rule's rows), scaled by powers of two, rounded "
                "to FP16 and sorted by norm on the device; each pair's 2(1 - a.b) in float32 within a proven bound of "
                "twice the rule's key"
              : ", rows uploaded as stored, centred, scaled by powers of two, rounded to FP16 and sorted by norm on the "
                "device; each pair's float32 distance within a proven bound of the rule's key") +
      ", the pairs within the bound of an edge settled in float64 (the rule itself); rows out of the FP16 path's range "
      "take the float64 kernel" +
      (list ? fmt::format("; pairs (certain and undecided) into a device buffer of {} pairs, each slab (or full buffer) "
                          "settled and compacted in float64, the distances the rule's, drained {}",
                          policy.gram_pair_buffer, to)
            : std::string());
  if (policy.vector_precision == TuningPolicy::VectorPrecision::Fp16) return "cuda kernel: " + gram + tail;
  return fmt::format(
      "cuda kernel, the cheaper of two by the cost model (precision auto: from {} pairs on, a deterministic sample of up "
      "to {} x {} pairs measures how many the FP16 bound{} leaves undecided; the run's plan gives that fraction and "
      "both estimates): (1) {}; (2) {}{}",
      fmt::format("{:.3g}", policy.sample_min_pairs), policy.sample_queries, policy.sample_partners,
      cosine ? " (the cosine bound, on the sample's normalised rows)" : "", gram, fp64, tail);
}

}  // namespace

std::string describe_vectors_on_device(const VectorPlan& plan) {
  if (plan.stat->output() == OutputKind::Nearest) return describe_nearest_on_device(plan, policy_for(plan));
  const Statistic& s = *plan.stat;
  const OutputKind out = s.output();
  const TuningPolicy policy = policy_for(plan);
  const int d = plan.a->dim();
  using G = TuningPolicy::VectorGrid;
  const bool forced = policy.vector_grid == G::Grid || (policy.vector_grid == G::Auto && plan.path == "grid");
  const bool off = policy.vector_grid == G::Off || (policy.vector_grid == G::Auto && plan.path == "brute") ||
                   (!forced && policy.vector_precision != TuningPolicy::VectorPrecision::Auto);
  if (s.metric != Metric::Euclidean || d < 9 || d > 64 || off ||
      (out != OutputKind::Reduction && out != OutputKind::PerPoint && out != OutputKind::PairList))
    return describe_all_pairs(plan);
  return fmt::format(
      "cuda: the vector grid {}: cells of width >= eps (float64, proven never to drop a pair within eps) on the m <= 6 "
      "dimensions of largest variance, m from a sample of the pairs; both sets sorted by cell key on the device (CUB "
      "radix sort) and gathered into that order; each cell's rows in chunks of <= 32, a chunk's neighbour cells as runs "
      "along the last grid dimension found by binary search in the sorted keys ({}); units (chunk x run piece of <= {} "
      "partners) heaviest first through a work queue of persistent warps, a query's partners split over 32/Q' lanes, "
      "every candidate's key by the rule in float64 (stored order, no FMA){}. Otherwise: {}",
      forced ? "(forced)" : "where its estimate beats every all-pairs kernel's (the run's plan gives both)",
      plan.is_auto() ? "the half shell: LID-UNICOMP, each pair once" : "the full 3^m shell", policy.vector_grid_piece,
      out == OutputKind::PairList ? fmt::format("; pairs through a buffer of {} pairs, resumed where a full buffer stopped",
                                                policy.vector_grid_pairs)
                                  : "",
      describe_all_pairs(plan));
}

}  // namespace twobody::cuda
