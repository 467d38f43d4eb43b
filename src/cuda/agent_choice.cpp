#include "twobody/detail/cuda/agent_choice.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <string>

#include <fmt/format.h>

#include "twobody/detail/cuda/copies_model.hpp"
#include "twobody/detail/engine/traversal_cost.hpp"
#include "twobody/error.hpp"

namespace twobody::cuda {

std::uint64_t PairProblem::all_pairs() const {
  return is_auto ? n_a * (n_a ? n_a - 1 : 0) / 2 : n_a * n_b;
}

namespace {

bool histogram(const PairProblem& p) { return p.mode == OutputMode::Histogram; }

std::size_t generic_smem(const PairProblem& p, int ncells, int copies, int stride, bool key_table, bool sums = false,
                         int threads = kThreads) {
  return pair_kernel_smem(p.dim, p.mode, p.weighted, p.nbins, ncells, copies, stride, key_table, sums, threads);
}

std::size_t grid_output_smem(const PairProblem& p, const OutputLayout& l, int ncells, int copies, bool sums = false) {
  return pair_output_smem(p.mode, p.weighted, p.nbins, ncells, copies * kGridWarps, l.stride, l.shared_regions, l.key_table,
                          sums);
}

// Whether the grid index may serve the problem, must, or why not.
void choose_grid_request(const PairProblem& p, OutputLayout& l) {
  const bool grid_regions = p.regions > 0 && !p.binned;
  const bool fits = p.binned || l.grid_smem <= l.budget;
  if (grid_regions && (!p.grid_metric || !fits))
    throw Error(ErrorKind::Config, "the CUDA backend counts jackknife regions on the grid path, which this statistic cannot "
                                   "take (a user's pair function, or histograms too large for shared memory); use --backend cpu");
  // Jackknife regions are counted by the grid kernels only: a labelled run always takes the grid
  // (with cells of the cutoff it covers every pair the brute force would).
  l.grid_forced = p.path == "grid" || grid_regions;
  if (p.path == "brute" && !grid_regions) l.no_grid_why = "brute force (requested)";
  else if (!fits) l.no_grid_why = "brute force: the grid kernel's per-warp histograms do not fit in shared memory";
  else if (p.triclinic)
    l.no_grid_why = "brute force: the device's grid does not take triclinic cells (every pair's minimum image in float64)";
  else if (!p.grid_metric) l.no_grid_why = "brute force: the grid path serves Euclidean cutoffs";
  l.grid_wanted = l.no_grid_why.empty();
}

}  // namespace

OutputLayout choose_layout(const PairProblem& p, const DeviceProperties& d) {
  const DeviceInfo& info = d.info;
  OutputLayout l;
  const int nb = p.nbins;
  if (!p.binned && nb > kMaxTableBins)
    throw Error(ErrorKind::Config, fmt::format("the CUDA backend takes at most {} bins (this histogram has {}); use --backend cpu",
                                               kMaxTableBins, nb));
  const bool hist = histogram(p);
  l.key_table = hist && !p.binned;  // a binned pair function's bins are float64's alone
  // Binned pair functions keep their regions in global memory (accept_global), never per lane.
  l.shared_regions = p.binned ? 0 : p.regions;
  l.budget = info.smem_optin / 2 - 1024;
  l.stride = (nb + 2) | 1;
  int max_cells = 65536;
  while (max_cells > 256 && generic_smem(p, max_cells, 1, l.stride, true) > l.budget) max_cells /= 2;
  // Jackknife regions need the grid agent's 32 sub-histograms a warp: a smaller table leaves them
  // room (what does not fit even with 256 cells, Backend::refuses sends to the CPU).
  if (hist && l.shared_regions > 0)
    while (max_cells > 256 && pair_output_smem(p.mode, p.weighted, nb, max_cells, 32 * kGridWarps, l.stride,
                                               l.shared_regions, l.key_table) > l.budget)
      max_cells /= 2;
  // At least 16384 cells (32 KB): the pairs near r_max, where most of a cutoff's pairs are, then
  // fall in an uncertain cell ~8x less often than with the 2048 cells 20 bins would get (with
  // 2048, ~11% of the grid kernel's instructions went to resolving them).
  if (l.key_table) l.table = make_guard_table(p.guard, max_cells, 16384);
  const int ncells = static_cast<int>(l.table.cells.size());
  // Spare counters for "outside" (nb) and for pairs left to resolve (nb + 1), so that counting
  // needs no branch; odd, so that copies of a bin sit in different banks. As many copies (up to
  // one a lane) as leave room for two blocks a multiprocessor.
  l.copies = hist ? 32 : 1;
  while (l.copies > 1 && generic_smem(p, ncells, l.copies, l.stride, l.key_table) > l.budget) l.copies /= 2;
  l.smem = generic_smem(p, ncells, l.copies, l.stride, l.key_table);
  if (!p.binned && l.smem > info.smem_optin)
    throw Error(ErrorKind::Resource, fmt::format("{} bins need {} bytes of shared memory per block; the device allows {}", nb,
                                                 l.smem, info.smem_optin));
  // The grid agent: per-warp groups of sub-histograms, as many as leave room for two blocks.
  l.grid_copies = hist ? 32 : 1;
  while (l.grid_copies > 1 && grid_output_smem(p, l, ncells, l.grid_copies) > l.budget) l.grid_copies /= 2;
  l.grid_smem = grid_output_smem(p, l, ncells, l.grid_copies);
  // Regions need a sub-histogram per lane (HistogramOutput::end_unit attributes a lane's counts to its anchor).
  if (l.shared_regions > 0 && hist && l.grid_copies < 32)
    throw Error(ErrorKind::Config, fmt::format("{} jackknife regions x {} bins do not fit the GPU's shared memory; use --backend cpu",
                                               p.regions, nb));
  choose_grid_request(p, l);
  return l;
}

namespace {

// 2-D bins: sub-histograms in shared memory when one copy a slot fits the budget; else, and always
// with regions (a sub-histogram per lane would be 32 x the bins, and R x bins region counters
// beside them), 64-bit atomics in global memory, pair by pair.
std::string choose_binned_output(const PairProblem& p, const OutputLayout& l, AgentChoice& c) {
  c.hist_global = p.regions > 0 || (c.grid() ? l.grid_smem : l.smem) > l.budget;
  if (c.hist_global) {
    c.copies = 0;
    c.smem = c.grid() ? 0 : pair_tile_smem(p.dim, p.weighted);
  }
  return fmt::format("; 2-D bins: every pair within the reach {} binned in float64 on the device, {} bins ",
                     std::to_string(p.edges.back()), p.nbins) +
         (c.hist_global ? std::string("counted by 64-bit atomics in global memory (") +
                              (p.regions > 0 ? std::to_string(p.regions) + " jackknife regions" : "too many for shared memory") + ")"
                        : "in " + std::to_string(c.grid() ? l.grid_copies * kGridWarps : l.copies) +
                              " sub-histograms in shared memory a block");
}

// Mean separations: each block's sums in shared memory when they fit beside its histogram, else
// added to the global sums pair by pair.
std::string choose_separation_sums(const PairProblem& p, const OutputLayout& l, AgentChoice& c) {
  const int ncells = static_cast<int>(l.table.cells.size());
  // (c.copies: 0 where 2-D bins went to global memory.)
  const std::size_t with_sums = c.grid() ? grid_output_smem(p, l, ncells, c.copies, true)
                                         : generic_smem(p, ncells, c.copies, l.stride, l.key_table, true);
  c.sums_shared = with_sums <= l.budget;
  if (c.sums_shared) c.smem = with_sums;
  return std::string(p.binned ? "; mean separations: the binned pair function's r_p or s of every pair in a bin, it and its log "
                                "summed in double "
                              : "; mean separations: the float64 key of every pair in a bin, its s and log s summed in double ") +
         (c.sums_shared ? "per block in shared memory" : "by atomics in global memory (no room beside the histogram)");
}

// The data's diameter bound: no pair of the shifted float32 points is farther apart.
double diameter(const PairProblem& p) { return 2 * std::sqrt(double(p.dim)) * p.model.M * (1 + 1e-6); }

// Counting tiles' thresholds and guard from their plan (counting_bounds.hpp).
void fill_tiles(const PairProblem& p, const CountingPlan& cp, AgentChoice& c) {
  CountingTilesShape& t = c.tiles;
  const auto& edges = p.edges;
  t.t_hi = cp.t_hi;
  t.t_lo = cp.t_lo;
  t.band_hi = fast_detail::round_up(cp.band_hi);
  t.band_lo = fast_detail::round_up(cp.band_lo);
  t.t_diff = static_cast<float>(cp.t_hi - cp.t_lo);
  t.has_lo = cp.has_lo;
  t.inv_width = static_cast<float>(cp.inv_width);
  t.lo = static_cast<float>(edges.front());
  t.d_min = static_cast<float>(cp.d_min);
  t.d_max = static_cast<float>(cp.d_max);
  t.guard_scale = std::ldexp(t.inv_width, cp.guard.frac_bits);  // exact: a power of 2
  t.guard_lo = static_cast<float>(0x1p23 + std::ldexp(1.0, cp.guard.frac_bits) - cp.guard.margin);
  t.guard_hi = static_cast<float>(0x1p23 + std::ldexp(1.0, cp.guard.frac_bits) + cp.guard.margin);
  t.guard_limit = 1u << cp.guard.frac_bits;
  t.lo64 = edges.front();
  t.inv_width64 = cp.inv_width;
  // No clamp when no pair (nor sentinel) can fall outside the bins: the first edge at 0, the
  // last beyond the data's diameter, and no ragged tile.
  const int nb = p.nbins;
  t.clamp = edges.front() > 0 || !(diameter(p) < edges.back() - 0.5 * (edges.back() - edges.front()) / nb) ||
            p.n_a % kAnchors != 0 || p.n_b % kThreads != 0;
}

// The FP64 tensor-core histogram's units: its d' is σ·d·2^64 (fp64_tensor_histogram_tiles.cuh): 1/w,
// lo and the clamp in those units (powers of two: exact); the guard's fixed-point offsets are
// unchanged.
void scale_for_fp64(const PairProblem& p, AgentChoice& c) {
  CountingTilesShape& t = c.tiles;
  const auto& edges = p.edges;
  c.fp64_scale = fp64_tensor_scale(p.model, edges);
  const int e = std::ilogb(c.fp64_scale) + 64;
  t.inv_width = std::ldexp(t.inv_width, -e);
  t.guard_scale = std::ldexp(t.guard_scale, -e);
  t.lo = std::ldexp(t.lo, e);
  t.d_min = std::ldexp(t.d_min, e);
  t.d_max = std::ldexp(t.d_max, e);
  // No clamp (one FMNMX a pair less) where every pair's q stays below nbins + 1/4 (slot nbins + 1
  // at most, and within the guard's fixed-point range, equal_width_guard: the diameter below the
  // last edge plus a quarter bin), the first edge is 0 and no tile holds sentinels.
  const double w = (edges.back() - edges.front()) / p.nbins;
  c.fp64_clamp = edges.front() > 0 ? kBoth
                 : diameter(p) < edges.back() + 0.25 * w && p.n_a % kTensorAnchors == 0 && p.n_b % kThreads == 0 ? kNoClamp
                                                                                                                  : kTop;
}

// The histogram tiles' copies by seed 000's model (copies_model.hpp) from this device's limits.
std::string choose_tiles_copies(const PairProblem& p, const CountingPlan& cp, bool fp64, const DeviceProperties& d,
                                const TuningPolicy& policy, AgentChoice& c) {
  const int nb = p.nbins;
  const SmLimits lim = sm_limits(d.info);
  const int reg_blocks = d.blocks_by_registers(fp64 ? AgentKernel::Fp64TensorHistogram : AgentKernel::CountingTilesHistogram);
  const auto bytes = [&](int h) {
    return fp64 ? fp64_tensor_histogram_smem(nb, h) + kFp64TensorStaticSmem : counting_tiles_smem(true, nb, h);
  };
  const double threads = static_cast<double>(p.n_a);
  const CopiesChoice cc =
      choose_copies(nb + 2, lim, kThreads, std::max(1, reg_blocks), bytes, threads, true, kCountingTilesCollisionPenalty);
  const CopiesChoice seed = choose_copies(nb + 2, lim, kThreads, std::max(1, reg_blocks), bytes, threads, false);
  c.tiles.copies = policy.histogram_copies ? policy.histogram_copies : cc.copies;
  while (c.tiles.copies > 1 && bytes(c.tiles.copies) > d.info.smem_optin) c.tiles.copies /= 2;
  std::string note = " (" + std::to_string(c.tiles.copies) + (c.tiles.copies == 1 ? " histogram copy" : " histogram copies") +
                     " interleaved by bin; the model's choice " + std::to_string(cc.copies) + ", the seed's " +
                     std::to_string(seed.copies) + ")";
  char guard_note[96];
  std::snprintf(guard_note, sizeof guard_note, "; guard %.2g bins either side of an edge, %s",
                (cp.guard.margin + 0.5) / std::ldexp(1.0, cp.guard.frac_bits),
                c.pair_flags ? "a flag bit a pair"
                : fp64       ? "a lane's marked words a block of 8 partners"
                             : "a marked word an anchor");
  return note + guard_note;
}

// The counting tiles (and their FP64 tensor-core histogram): Euclidean counts and equal-width
// histograms over all pairs, where their bounds leave few pairs to settle. Returns the note.
std::string choose_counting_tiles(const PairProblem& p, const DeviceProperties& d, const TuningPolicy& policy,
                                  AgentChoice& c, bool& usable) {
  const DeviceInfo& info = d.info;
  const auto& edges = p.edges;
  const int nb = p.nbins;
  std::string note;
  // Histograms: d² on the FP64 tensor cores (fp64_tensor_histogram_tiles.cuh) wherever its plan holds.
  CountingPlan cp;
  bool fp64 = false;
  if (histogram(p) && policy.fp64_tensor_histogram) {
    cp = fp64_tensor_histogram_plan(p.model, edges);
    // Decided before the shape is filled (and scaled) for it: one copy must fit a block.
    if (cp.usable && !(fp64_tensor_histogram_smem(nb, 1) + kFp64TensorStaticSmem <= info.smem_optin)) {
      cp.usable = false;
      cp.why = "no FP64 tensor-core histogram (one copy of it exceeds a block's shared memory)";
    }
    fp64 = cp.usable;
    if (!fp64) note = "; " + cp.why;
  }
  if (!fp64)
    cp = p.mode == OutputMode::Reduce ? gram_count_plan(p.model, edges.front(), edges.back()) : equal_width_plan(p.model, edges);
  note += "; " + cp.why;
  usable = false;
  if (!cp.usable) return note;
  fill_tiles(p, cp, c);
  // Per-pair flag bits where more than ~0.4% of the pairs fall in the guard (a few thousand bins
  // and more over the data's extent): there most anchors of a warp are marked after a group, and
  // re-evaluating each (~20 instructions a warp) costs more than the bits (~2.4 a pair).
  const double guarded = 2 * cp.guard.margin / std::ldexp(1.0, cp.guard.frac_bits);
  c.pair_flags = policy.pair_flags ? *policy.pair_flags : guarded > policy.pair_flags_above;
  if (fp64) scale_for_fp64(p, c);
  c.tiles.copies = 1;
  if (histogram(p)) note += choose_tiles_copies(p, cp, fp64, d, policy, c);
  if (fp64) {
    // (Fits: one copy was checked with the plan, and the copies were halved to fit.)
    c.smem = fp64_tensor_histogram_smem(nb, c.tiles.copies);
    c.anchors_per_item = kTensorAnchors;
    c.agent = Agent::Fp64TensorHistogram;
    usable = true;
  } else {
    c.smem = counting_tiles_smem(histogram(p), nb, c.tiles.copies);
    usable = c.smem + 64 <= info.smem_optin;  // (and the kernel's static shared words)
    c.agent = Agent::CountingTiles;
  }
  return note;
}

// Histograms on the TF32 tensor cores (tensor_histogram_tiles.cuh), on request, where their guard
// is narrow enough (equal-width bins, up to a few hundred over the data's extent); the anchors in
// Morton order. Not the default: on the H100 they ran at 1 144–1 296 Gpairs/s (2^22 points, 8–256
// bins) against the counting tiles' 1 414 (bench/RESULTS.md).
std::string choose_tensor_histogram(const PairProblem& p, const DeviceProperties& d, const TuningPolicy& policy,
                                    AgentChoice& c) {
  const auto& edges = p.edges;
  const int nb = p.nbins;
  const TensorHistogramPlan hp = tensor_histogram_plan(p.model, edges);
  std::string note = "; " + hp.why;
  if (!hp.usable) return note;
  const double lo = edges.front(), hi = edges.back(), w = hp.guard.width;
  TensorHistogramShape& t = c.thist;
  t.guard = hp.guard;
  t.inv_width = static_cast<float>(hp.inv_width);
  t.magic = static_cast<float>(1.5 * std::ldexp(1.0, 23 - hp.guard.frac_bits) + hp.offset);
  t.s_below = lo > 0 ? static_cast<float>((lo - 0.25 * w) * (lo - 0.25 * w)) : 0.f;
  t.s_above = static_cast<float>((hi + 0.25 * w) * (hi + 0.25 * w));
  t.lo64 = lo;
  t.inv_width64 = 1.0 / w;
  c.thist_clamp = lo > 0 || !(diameter(p) < hi - 0.5 * w) || p.n_a % kTensorAnchors != 0 || p.n_b % kThreads != 0;
  const SmLimits lim = sm_limits(d.info);
  const auto bytes = [&](int h) { return tensor_histogram_smem(nb, h) + kTensorHistogramStaticSmem; };
  const CopiesChoice cc = choose_copies(nb + 2, lim, kThreads, 3, bytes, static_cast<double>(p.n_a), true,
                                        kCountingTilesCollisionPenalty);
  t.copies = policy.histogram_copies ? policy.histogram_copies : cc.copies;
  while (t.copies > 1 && bytes(t.copies) > d.info.smem_optin) t.copies /= 2;
  const std::size_t smem = tensor_histogram_smem(nb, t.copies);
  if (smem + kTensorHistogramStaticSmem > d.info.smem_optin) return note;
  c.agent = Agent::TensorHistogram;
  c.smem = smem;
  c.anchors_per_item = kTensorAnchors;
  return note + " (" + std::to_string(t.copies) + (t.copies == 1 ? " histogram copy" : " histogram copies") +
         " interleaved by bin; the model's choice " + std::to_string(cc.copies) + ")";
}

// Counts on the tensor cores (tensor_count_tiles.cuh) where their wider bound allows (on the H100
// 3.8 T pairs/s against the CUDA-core tiles' 3.1–3.6 T): half precision (one FP16 MMA a block)
// where σ²r² fits FP16, else split TF32 (two).
std::string choose_tensor_count(const PairProblem& p, const TuningPolicy& policy, AgentChoice& c) {
  const auto& edges = p.edges;
  std::string note;
  CountingPlan tp;
  if (policy.tensor_count != TuningPolicy::TensorCount::Tf32) {
    tp = tensor_half_count_plan(p.model, edges.front(), edges.back());
    if (!tp.usable) note += "; " + tp.why;
  }
  c.tensor_half = tp.usable;
  if (!c.tensor_half) tp = tensor_count_plan(p.model, edges.front(), edges.back());
  note += "; " + tp.why;
  if (!tp.usable) return note;
  c.agent = Agent::TensorCount;
  // Half: every value in units of σ² (a power of two: exact).
  const double sigma = c.tensor_half ? tensor_half_scale(p.model.M) : 1.0, s2 = sigma * sigma;
  c.tensor.scale = static_cast<float>(sigma);
  c.tensor.t_hi = tp.t_hi * s2;
  c.tensor.band_hi = static_cast<float>(fast_detail::round_up(tp.band_hi) * s2);
  c.tensor.band_lo = static_cast<float>(fast_detail::round_up(tp.band_lo) * s2);
  c.tensor.t_diff = static_cast<float>((tp.t_hi - tp.t_lo) * s2);
  c.tensor.has_lo = tp.has_lo;
  c.smem = 0;
  c.anchors_per_item = kTensorAnchors;
  return note;
}

// All pairs, Euclidean, unweighted, up to three dimensions: the specialised agents. In order of
// preference: the tensor-core counts (counts), the TF32 tensor-core histogram (on request), the
// counting tiles (and their FP64 histogram). Leaves c.agent Generic when none takes the problem.
std::string choose_tiles_agent(const PairProblem& p, const DeviceProperties& d, const TuningPolicy& policy, AgentChoice& c) {
  const AgentChoice generic = c;
  bool tiles = false;
  std::string note = choose_counting_tiles(p, d, policy, c, tiles);
  AgentChoice with_tiles = c;
  if (!tiles) with_tiles = generic;
  c = with_tiles;
  if (histogram(p) && policy.tensor_histogram) {
    AgentChoice t = c;
    note += choose_tensor_histogram(p, d, policy, t);
    if (t.agent == Agent::TensorHistogram) c = t;
  }
  if (p.mode == OutputMode::Reduce && policy.tensor_count != TuningPolicy::TensorCount::Off) {
    AgentChoice t = c;
    note += choose_tensor_count(p, policy, t);
    if (t.agent == Agent::TensorCount) c = t;
  }
  return note;
}

// The generic agents' copies (histograms of 1-D keys without jackknife regions, which need a copy
// a lane): seed 000's model (copies_model.hpp, equations 1–5; collisions on one address, since
// copies are laid out copy-major with an odd stride), weighing each H's shared memory against the
// kernel's own blocks a multiprocessor by registers, among the H that fit half the shared memory a
// block may use (the fitting rule's choice is the most). And for the brute-force agent the block
// size by the same model: a block's sub-histograms cost the same shared memory at 256 and 512
// threads, so where shared memory, not registers, bounds the blocks a multiprocessor, blocks of
// 512 hold more threads (α) and the model's rounds fall. Taken only when its modelled time is
// lower (ties keep 256).
std::string choose_generic_copies(const PairProblem& p, const OutputLayout& l, const DeviceProperties& d,
                                  const TuningPolicy& policy, AgentChoice& c) {
  const int fit_copies = c.copies;  // the fitting rule's budget
  const int ncells = static_cast<int>(l.table.cells.size());
  struct Choice {
    int reg_blocks = 0;
    CopiesChoice copies;
    std::size_t bytes = 0;
    double cost = HUGE_VAL;
  };
  const auto model = [&](AgentKernel k, int threads) {
    Choice g;
    g.reg_blocks = d.blocks_by_registers(k);
    const bool grid = k == AgentKernel::Grid;
    const auto slot_bytes = [&](int h) -> std::size_t {
      if (h > fit_copies) return ~std::size_t(0);  // beyond the budget
      return grid ? grid_output_smem(p, l, ncells, h, c.sums_shared)
                  : generic_smem(p, ncells, h, l.stride, l.key_table, c.sums_shared, threads);
    };
    g.copies = choose_copies(p.nbins + 2, sm_limits(d.info), threads, std::max(1, g.reg_blocks), slot_bytes,
                             static_cast<double>(p.n_a), false);
    g.bytes = slot_bytes(g.copies.copies);
    for (double x : g.copies.cost) g.cost = std::min(g.cost, x);
    return g;
  };
  const auto take = [&](const Choice& g, bool grid) {
    c.copies = g.copies.copies;
    c.smem = g.bytes;
    return "; " + std::to_string(g.copies.copies) + (grid ? " sub-histograms a warp" : " sub-histograms a block") +
           " by seed 000's copies model (the fitting rule's " + std::to_string(fit_copies) + "; " +
           std::to_string(g.reg_blocks) + " blocks a multiprocessor by registers)";
  };
  if (c.grid()) return take(model(AgentKernel::Grid, kGridThreads), true);
  const Choice g256 = model(AgentKernel::Generic256, 256), g512 = model(AgentKernel::Generic512, 512);
  bool wide = g512.cost < g256.cost;
  if (policy.generic_block) wide = policy.generic_block == 512 && std::isfinite(g512.cost);
  char note[160];
  std::snprintf(note, sizeof note, "; blocks of %d threads by seed 000's occupancy model (modelled time at 256: %.3g, at 512: %.3g)",
                wide ? 512 : 256, g256.cost, g512.cost);
  std::string out = note;
  if (!wide) return out + take(g256, false);
  c.threads = 512;
  c.anchors_per_item = 512 * kPerThread;
  return out + take(g512, false);
}

}  // namespace

bool grid_taken(const OutputLayout& layout, const GridMeasure& grid, std::uint64_t all_pairs) {
  return grid.built && (layout.grid_forced || grid_pays(grid.evaluations, all_pairs, kCudaTraversalCost));
}

AgentChoice choose_agent(const PairProblem& p, const OutputLayout& l, const GridMeasure& grid, const DeviceProperties& d,
                         const TuningPolicy& policy) {
  AgentChoice c;
  const std::uint64_t all = p.all_pairs();
  if (grid.built) {
    const bool chosen = grid_taken(l, grid, all);
    if (chosen) c.agent = Agent::Grid;
    c.grid_why = std::string(chosen ? "grid" : "brute force") + ": " + grid.shape + " holds " +
                 std::to_string(grid.evaluations) + " candidate pairs in " + std::to_string(grid.units) +
                 " warp units, brute force " + std::to_string(all);
  } else {
    c.grid_why = grid.why;
  }
  c.threads = c.grid() ? kGridThreads : kThreads;
  c.copies = c.grid() ? l.grid_copies : l.copies;
  c.smem = c.grid() ? l.grid_smem : l.smem;
  std::string output_note;
  if (p.binned) output_note = choose_binned_output(p, l, c);
  if (p.means) output_note = (p.binned ? output_note : std::string()) + choose_separation_sums(p, l, c);
  // The one-load lookup pays when most cells are certain (few bins per cell); with thousands of
  // bins the table is too coarse and the band walk decides every pair.
  std::size_t certain_cells = 0;
  for (auto e : l.table.cells) certain_cells += e < kUncertain;
  c.direct = l.key_table && 4 * certain_cells >= 3 * l.table.cells.size();
  std::string tiles_note;
  // (Not with mean separations: those take the generic agents, whose items these kernels would
  // reshape.)
  if (p.euclidean_tiles && policy.counting_tiles && !c.grid() && !p.weighted && p.regions == 0 && !p.means && !p.binned &&
      (p.mode == OutputMode::Reduce || histogram(p)))
    tiles_note = choose_tiles_agent(p, d, policy, c);
  std::string copies_note;
  const bool generic = c.agent == Agent::Generic || c.agent == Agent::Grid;
  if (generic && histogram(p) && !p.binned && p.regions == 0 && c.copies > 1 && policy.generic_copies_model)
    copies_note = choose_generic_copies(p, l, d, policy, c);
  // (The counting tiles' note only where they could have run.)
  c.notes = (p.binned || p.means ? output_note : tiles_note) + copies_note;
  return c;
}

}  // namespace twobody::cuda
