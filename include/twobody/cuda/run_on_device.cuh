#pragma once
// Host side of the CUDA backend for one pair function: uploads the points (float32 for the fast
// path, float64 for the exact rule), builds the guard bands, sizes the privatised histograms and
// the persistent grid from the device's properties, and runs the kernel for the output kind.
// Instantiated per metric in run_*.cu, so the kernels compile in parallel.
#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <chrono>
#include <thread>
#include <cmath>
#include <memory>
#include <numbers>
#include <type_traits>
#include <string>

#include "twobody/cuda/cuda_check.hpp"
#include "twobody/cuda/device_info.hpp"
#include "twobody/cuda/device_buffer.hpp"
#include "twobody/fast_proxies.hpp"
#include "twobody/cuda/copies_model.hpp"
#include "twobody/cuda/counting_tiles.cuh"
#include "twobody/cuda/tensor_count_tiles.cuh"
#include "twobody/cuda/grid_kernel.cuh"
#include "twobody/counting_bounds.hpp"
#include "twobody/cuda/matrix_kernel.cuh"
#include "twobody/cuda/pair_kernel.cuh"
#include "twobody/backend.hpp"

namespace twobody::cuda {


// x - shift, rounded to float32 on the device (only the float64 coordinates cross the bus).
template <int D>
__global__ void shifted_float_kernel(DeviceSet s, GridPointArrays<D> dst) {
  const std::uint32_t i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= s.n) return;
#pragma unroll
  for (int d = 0; d < D; ++d) dst.x[d][i] = static_cast<float>(s.x64[d][i] - dst.shift[d]);
}

// One point set on the device, float32 (shifted by `shift`) and float64 (as given).
template <int D>
struct DevicePoints {
  std::vector<DeviceBuffer<float>> f32;
  std::vector<DeviceBuffer<double>> f64;
  DeviceBuffer<double> w;
  DeviceBuffer<std::int32_t> region;
  DeviceSet view{};

  DevicePoints(const PointSet& p, const std::vector<double>& shift, bool weights, bool regions = false) {
    const std::size_t n = p.size();
    view.n = static_cast<std::uint32_t>(n);
    GridPointArrays<D> dst{};
    for (int d = 0; d < D; ++d) {
      f32.emplace_back(n);
      f64.emplace_back(n);
      f64.back().upload(p.coord(d).data(), n);
      view.x[d] = dst.x[d] = f32.back().get();
      view.x64[d] = f64.back().get();
      dst.shift[d] = shift[d];
    }
    if (weights) {
      w = DeviceBuffer<double>(n);
      w.upload(p.weights().data(), n);
      view.w = w.get();
    }
    if (regions) {
      region = DeviceBuffer<std::int32_t>(n);
      region.upload(p.regions().data(), n);
      view.region = region.get();
    }
    if (n) {
      shifted_float_kernel<D><<<grid_detail::blocks_for(n), 256>>>(view, dst);
      TWOBODY_CUDA_CHECK_LAUNCH("shifted_float_kernel");
    }
  }
};

// Pair functions with a cutoff the grid index can exploit.
template <class F>
constexpr bool kGridMetric = false;
template <int D>
constexpr bool kGridMetric<Euclidean<D>> = true;
template <int D>
constexpr bool kGridMetric<PeriodicEuclidean<D>> = true;
template <>
constexpr bool kGridMetric<AngularSeparation> = true;

// The cutoff in the coordinates the grid sees: a distance, or for angles the chord 2 sin(θ/2)
// between unit vectors (0 when the cutoff reaches the whole sphere: no grid).
template <class F>
double grid_cutoff(double hi) {
  if constexpr (std::is_same_v<F, AngularSeparation>) {
    return hi >= 180.0 ? 0.0 : 2.0 * std::sin(0.5 * hi * (std::numbers::pi / 180.0));
  } else {
    return hi;
  }
}

// The grid path on the device: both sets in cell order and the work queue. Chosen when its exact
// evaluation count (from the cells' occupancy) is below a quarter of brute force's: the brute-force
// kernel spends about that much less per evaluation (eight anchors per thread, shared tiles).
template <int D>
struct DeviceGrid {
  GridShape shape;
  std::unique_ptr<DeviceGridSet<D>> a, b;  // b null for auto
  std::unique_ptr<GridWorkQueue> queue;
  int anchors = 1;  // per lane (grid_kernel's Anchors)
  bool chosen = false;
  std::string why;
};

// Cells for the windowed kernel in 3-D: columns r_max / R wide across the first two axes and
// r_max deep along the last (the windows cut runs along it to what the anchors can reach, so
// deeper cells cost nothing there and fill the warps' units). R trades the evaluations a column
// adds beyond the sphere — per anchor ρ r³ V(R), V the volume the windows leave (1: 18.0,
// 2: 11.1, 3: 8.77, 4: 7.56, 5: 6.78 r³ for the full shell, against the sphere's 4.19) — against
// the fixed cost of one more column run per warp (about 48 evaluations' worth: the window, two
// searches, a partial tile), (2R + 1)² runs. Returns false (keep the isotropic cells) where a
// periodic axis holds fewer than three cells of r_max, so images would not be unique.
// `density`: partners per unit volume around a typical anchor.
inline bool windowed_geometry(const PointSet& a, const PointSet& b, double rmax, const Box* box, double density,
                              std::int64_t max_cells, GridGeometry& geo, int* reach) {
  if (a.dim() != 3) return false;
  std::array<double, 3> origin{}, extent{};
  for (int d = 0; d < 3; ++d) {
    if (box) {
      extent[d] = box->length[d];
    } else {
      const auto [lo, hi] = joint_range(a, b, d);
      origin[d] = lo;
      extent[d] = hi - lo;
    }
  }
  const double r = rmax * (1.0 + 1e-6);
  if (box && std::floor(extent[2] / r) < 3) return false;
  static constexpr double kWindowVolume[] = {18.0, 11.11, 8.77, 7.56, 6.78};
  // A fixed R for tests and tuning: TWOBODY_GRID_REACH=1..5 (where the box allows it).
  int only = 0;
  if (const char* env = std::getenv("TWOBODY_GRID_REACH")) {
    only = std::atoi(env);
    if (only < 1 || only > 5) throw Error(ErrorKind::Config, "TWOBODY_GRID_REACH must be 1..5");
  }
  int best = 0;
  double best_cost = 0;
  for (int R = 1; R <= 5; ++R) {
    if (only && R != only) continue;
    bool ok = true;
    std::int64_t total = std::max<std::int64_t>(1, static_cast<std::int64_t>(extent[2] / r));
    for (int d = 0; d < 2; ++d) {
      const auto n = std::max<std::int64_t>(1, static_cast<std::int64_t>(std::min(extent[d] / (r / R), 1e9)));
      if (box && n < 2 * R + 1) ok = false;
      total *= n;
    }
    if (!ok || total > max_cells) continue;
    const double cost = density * r * r * r * kWindowVolume[R - 1] + 48.0 * (2 * R + 1) * (2 * R + 1);
    if (!best || cost < best_cost) {
      best = R;
      best_cost = cost;
    }
  }
  if (!best) return false;
  geo = GridGeometry{};
  geo.dim = 3;
  geo.periodic = box != nullptr;
  geo.refine = 1;
  geo.total = 1;
  for (int d = 0; d < 3; ++d) {
    reach[d] = d < 2 ? best : 1;
    const double target = r / reach[d];
    geo.origin[d] = origin[d];
    geo.cells[d] = std::max<std::int64_t>(1, static_cast<std::int64_t>(std::min(extent[d] / target, 1e9)));
    geo.width[d] = extent[d] > 0 ? extent[d] / static_cast<double>(geo.cells[d]) : 1.0;
    geo.total *= geo.cells[d];
  }
  return true;
}

// `binned`: a binned pair function (2-D bins), whose regions are counted in global memory on either
// traversal (PairOutput::accept_global), so they do not force the grid.
template <class F>
DeviceGrid<F::dim> plan_device_grid(const Plan& plan, const DevicePoints<F::dim>& da, const DevicePoints<F::dim>* db,
                                    const std::vector<double>& shift, bool fits, bool binned = false) {
  constexpr int D = F::dim;
  DeviceGrid<D> g;
  const Statistic& s = *plan.stat;
  const bool grid_regions = s.regions > 0 && !binned;
  if (grid_regions && (!kGridMetric<F> || !fits))
    throw Error(ErrorKind::Config, "the CUDA backend counts jackknife regions on the grid path, which this statistic cannot "
                                   "take (a user's pair function, or histograms too large for shared memory); use --backend cpu");
  if (plan.path == "brute" && !grid_regions) {
    g.why = "brute force (requested)";
    return g;
  }
  if (!fits) {
    g.why = "brute force: the grid kernel's per-warp histograms do not fit in shared memory";
    return g;
  }
  if constexpr (!kGridMetric<F>) {
    g.why = "brute force: the grid path serves Euclidean cutoffs";
    return g;
  } else {
    const std::uint64_t brute = pair_total(plan.a->size(), plan.b->size(), plan.is_auto());
    const std::int64_t n_points = static_cast<std::int64_t>(plan.a->size() + (plan.is_auto() ? 0 : plan.b->size()));
    const std::int64_t max_cells = std::max<std::int64_t>(1, std::min<std::int64_t>(std::int64_t(1) << 26, n_points));
    const Box* box = s.metric == Metric::Periodic ? &s.box : nullptr;
    const double cutoff = grid_cutoff<F>(s.binning.hi());
    if (!(cutoff > 0)) {
      g.why = "brute force: the cutoff reaches the whole sphere";
      return g;
    }
    GridGeometry geo;
    int reach[kMaxDim] = {};
    // The density a typical anchor sees — on clustered data far above the mean, on angles that of
    // a surface — from the occupancy of cells of r_max: Σ_c n_A(c) n_B(c) / (n_A V_cell).
    double density = 0;
    if (D == 3) {
      const GridGeometry coarse = make_grid_geometry(*plan.a, *plan.b, cutoff, box, 1, max_cells);
      const GridShape cs = grid_shape(coarse);
      const auto ca = count_cells(cs, da.view);
      const auto cb = db ? count_cells(cs, db->view) : ca;
      double sum = 0, volume = 1;
      for (std::size_t c = 0; c < ca.size(); ++c) sum += static_cast<double>(ca[c]) * cb[c];
      for (int d = 0; d < D; ++d) volume *= coarse.width[d];
      density = sum / (std::max<double>(1.0, static_cast<double>(plan.a->size())) * volume);
    }
    const bool windowed = windowed_geometry(*plan.a, *plan.b, cutoff, box, density, max_cells, geo, reach);
    if (!windowed) {
      // Cells of r_max / 2 (a 5^D neighbourhood, fewer evaluations) while they hold 16 points on
      // average, so that a warp's unit of 32 anchors spans one or two cells; r_max otherwise.
      int refine = D <= 3 ? 2 : 1;
      geo = make_grid_geometry(*plan.a, *plan.b, cutoff, box, refine, max_cells);
      if (refine > 1 && geo.total * 16 > n_points) {
        refine = 1;
        geo = make_grid_geometry(*plan.a, *plan.b, cutoff, box, refine, max_cells);
      }
      for (int d = 0; d < D; ++d) reach[d] = refine;
    }
    std::int64_t span = 1;  // cells in one neighbourhood
    for (int d = 0; d < D; ++d) span *= std::min<std::int64_t>(geo.cells[d], 2 * reach[d] + 1);
    // Jackknife regions are counted by the grid kernels only: a labelled run always takes the grid
    // (with cells of the cutoff it covers every pair the brute force would).
    const bool forced = plan.path == "grid" || grid_regions;
    if (!forced && (geo.total <= span || brute < (std::uint64_t(1) << 24))) {
      g.why = "brute force: the cutoff spans the whole extent, or too few pairs for a grid to pay";
      return g;
    }
    g.shape = grid_shape(geo, reach);
    // Two anchors a lane where cells hold many (the occupancy an anchor's cell typically has, from
    // the density it sees): unweighted histograms through the windows.
    double cell_volume = 1;
    for (int d = 0; d < D; ++d) cell_volume *= geo.width[d];
    const bool two_fit = windowed && g.shape.images && s.output == OutputKind::Histogram && !s.weighted && s.regions == 0 &&
                         !s.mean_separation && !binned;
    // (Measured on the H100: 10^7 points, r < 100, ~460 points a cell, kernel 405 -> ~360 ms; at
    // ~130 a cell, 10^6 r < 100, no gain.)
    if (two_fit && density * cell_volume >= 256) g.anchors = 2;
    if (const char* env = std::getenv("TWOBODY_GRID_ANCHORS"))  // tests and tuning: 1 or 2 (where it applies)
      g.anchors = std::atoi(env) == 2 && two_fit ? 2 : 1;
    g.a = std::make_unique<DeviceGridSet<D>>(g.shape, da.view, shift.data());
    if (db) g.b = std::make_unique<DeviceGridSet<D>>(g.shape, db->view, shift.data());
    g.queue = std::make_unique<GridWorkQueue>(g.shape, g.a->start.get(), (g.b ? g.b : g.a)->start.get(), plan.is_auto(),
                                              32u * static_cast<std::uint32_t>(g.anchors));
    g.chosen = forced || 4 * g.queue->evaluations < brute;
    g.why = std::string(g.chosen ? "grid" : "brute force") + ": a grid of ";
    for (int d = 0; d < D; ++d) {
      if (d) g.why += 'x';
      g.why += std::to_string(geo.cells[d]);
    }
    g.why += " cells (reach";
    for (int d = 0; d < D; ++d) {
      g.why += d ? 'x' : ' ';
      g.why += std::to_string(reach[d]);
    }
    g.why += std::string(g.shape.images ? ", windows along the last axis" : ", minimum images") +
             (g.anchors == 2 ? ", two anchors a lane" : "") + ") holds " +
             std::to_string(g.queue->evaluations) + " candidate pairs in " + std::to_string(g.queue->n_units) +
             " warp units, brute force " + std::to_string(brute);
    return g;
  }
}

// The direct output buffer of pair lists on the device (pair_pool.hpp): the pool, its counters and
// a launch's resumed units. prepare() readies it for a launch over the queue's tasks; drain() moves
// the filled pages out after it and tells the queue which units still have pairs to write.
struct DevicePairPool {
  PairPoolShape shape;
  unsigned long long workers;  // warps resident at once, at most: each records at most one stopped unit
  int warps;                   // per unit
  DeviceBuffer<PairSlot> slots;
  DeviceBuffer<std::uint32_t> unused;
  DeviceBuffer<unsigned long long> counters;  // the page pointer, stopped units
  DeviceBuffer<unsigned long long> task_unit, task_skip, stopped_unit, stopped_skip;

  DevicePairPool(PairPoolShape s, unsigned long long max_workers, int unit_warps)
      : shape(s), workers(max_workers), warps(unit_warps), slots(s.pages * s.page_size), unused(s.pages), counters(2),
        task_unit(max_workers), task_skip(max_workers * unit_warps), stopped_unit(max_workers),
        stopped_skip(max_workers * unit_warps) {}

  // The buffer for a launch over q's tasks; its counters zeroed (on the legacy stream).
  PairListBuffer prepare(const PairListQueue& q) {
    // A launch's resumed units were stopped by the workers of the one before (or left unclaimed).
    if (q.resumed_units().size() > workers)
      throw Error(ErrorKind::Internal, "pair list: more units to resume than workers can have stopped");
    task_unit.upload(q.resumed_units());
    task_skip.upload(q.resumed_skips());
    unused.zero();
    counters.zero();
    PairListBuffer b;
    b.slots = slots.get();
    b.page_size = shape.page_size;
    b.pages = shape.pages;
    b.next_page = counters.get();
    b.page_unused = unused.get();
    b.task_unit = task_unit.get();
    b.task_skip = task_skip.get();
    b.resumed = q.resumed_units().size();
    b.first_unit = q.first_unit();
    b.warps = warps;
    b.stopped = counters.get() + 1;
    b.stopped_unit = stopped_unit.get();
    b.stopped_skip = stopped_skip.get();
    b.stopped_capacity = workers;
    return b;
  }

  // After a launch whose workers claimed `claimed` tasks: the used pages' pairs, in the callers'
  // indices (drain_pages), to take(batch) in batches of about 2^22, and the queue moved on.
  template <class Take>
  void drain(PairListQueue& q, unsigned long long claimed, const std::uint32_t* order_a, const std::uint32_t* order_b,
             bool is_auto, Take&& take) {
    unsigned long long c[2];
    counters.download(c, 2);
    const unsigned long long used = std::min(c[0], shape.pages), n_stopped = c[1];
    if (n_stopped > workers) throw Error(ErrorKind::Internal, "pair list: more units stopped than workers ran");
    std::vector<std::uint32_t> h_unused(used);
    unused.download(h_unused.data(), used);
    const unsigned long long chunk = std::max<unsigned long long>(1, (1ull << 22) / shape.page_size);
    std::vector<PairSlot> h_slots;
    std::vector<PairRecord> batch;
    for (unsigned long long p0 = 0; p0 < used; p0 += chunk) {
      const unsigned long long n = std::min(chunk, used - p0);
      h_slots.resize(n * shape.page_size);
      TWOBODY_CUDA_CHECK(cudaMemcpy(h_slots.data(), slots.get() + p0 * shape.page_size,
                                    n * shape.page_size * sizeof(PairSlot), cudaMemcpyDeviceToHost));
      batch.clear();
      drain_pages(h_slots.data(), h_unused.data() + p0, n, shape.page_size, order_a, order_b, is_auto, batch);
      if (!batch.empty()) take(batch);
    }
    std::vector<unsigned long long> units(n_stopped), skips(n_stopped * static_cast<unsigned>(warps));
    stopped_unit.download(units.data(), units.size());
    stopped_skip.download(skips.data(), skips.size());
    q.after_launch(claimed, units.data(), skips.data(), units.size());
  }
};

// The pairs of `plan` found through the metric F (its float32 proxy and guard bands, its grid),
// each settled by `exact`: F itself, whose float64 key plan.edges bins, or a binned pair function
// (2-D bins: plan.edges is then the one range [0, cutoff) that finds the pairs, and the
// histogram has `nb` flat bins).
template <class F, class Exact>
Result run_pairs(const F& f, const Plan& plan, const Exact& exact, const int nb) {
  constexpr int D = F::dim;
  constexpr bool kBinned = binned_pair_function<Exact>;
  using Fast = FastPath<F>;
  const Statistic& s = *plan.stat;
  const PointSet& A = *plan.a;
  const PointSet& B = *plan.b;
  if (A.size() >= (std::size_t(1) << 32) || B.size() >= (std::size_t(1) << 32))
    throw Error(ErrorKind::Resource, "the CUDA backend takes at most 2^32 - 1 points per set");

  // Wall time of each phase, reported with the plan (where a short run spends its time).
  std::string phases;
  auto t_phase = std::chrono::steady_clock::now();
  auto lap = [&](const char* name) {
    TWOBODY_CUDA_CHECK(cudaDeviceSynchronize());
    const auto now = std::chrono::steady_clock::now();
    char buf[64];
    std::snprintf(buf, sizeof buf, "%s%s %.2f ms", phases.empty() ? "" : ", ", name,
                  std::chrono::duration<double, std::milli>(now - t_phase).count());
    phases += buf;
    t_phase = now;
  };
  // Shift to the centre of the joint range (distances) so float32 keeps the most bits.
  const FastSetup<F> setup = make_fast_setup(f, A, B);
  lap("host setup");
  const std::vector<double>& shift = setup.shift;
  const auto& model = setup.model;

  const bool weighted = s.weighted;
  const int regions = s.regions;
  DevicePoints<D> da(A, shift, weighted, regions > 0);
  std::unique_ptr<DevicePoints<D>> db_owner;
  const DevicePoints<D>* db = &da;
  if (!plan.is_auto()) {
    db_owner = std::make_unique<DevicePoints<D>>(B, shift, weighted, regions > 0);
    db = db_owner.get();
  }

  const GuardBands guard = make_guard_bands(plan.edges, model);
  const int nkeys = plan.edges.nbins;  // key bins (a binned pair function's reach: one)
  if (!kBinned && nb > kMaxTableBins)
    throw Error(ErrorKind::Config, "the CUDA backend takes at most " + std::to_string(kMaxTableBins) + " bins (this histogram has " +
                                       std::to_string(nb) + "); use --backend cpu");
  std::vector<double> e64(plan.edges.padded.begin(), plan.edges.padded.begin() + nkeys + 1);
  DeviceBuffer<double> d_e64(e64);
  const OutputMode mode = s.output == OutputKind::Reduction ? OutputMode::Reduce
                          : s.output == OutputKind::PairList ? OutputMode::PairList
                          : s.output == OutputKind::PerPoint ? OutputMode::PerPoint
                                                             : OutputMode::Histogram;
  DeviceBuffer<unsigned long long> d_counts(mode == OutputMode::Histogram ? nb : 1);
  DeviceBuffer<double> d_wsums(mode == OutputMode::Histogram ? nb : 1);
  DeviceBuffer<unsigned long long> d_scalars(2);  // settled, next item
  d_counts.zero();
  d_wsums.zero();
  const bool means = s.mean_separation;
  DeviceBuffer<double> d_sep_sums(means ? nb : 0), d_log_sep_sums(means ? nb : 0);
  d_sep_sums.zero();
  d_log_sep_sums.zero();

  // Histogram shape: the float-bits table, and as many sub-histogram copies (up to one per lane)
  // as leave room for two blocks per multiprocessor.
  const DeviceInfo info = device_info();
  const bool hist = mode == OutputMode::Histogram;
  const bool key_table = hist && !kBinned;  // a binned pair function's bins are float64's alone
  // Binned pair functions keep their regions in global memory (accept_global), never per lane.
  const int shared_regions = kBinned ? 0 : regions;
  const std::size_t budget = info.smem_optin / 2 - 1024;
  int max_cells = 65536;
  while (max_cells > 256 && pair_kernel_smem<D>(mode, weighted, nb, max_cells, 1, (nb + 2) | 1) > budget) max_cells /= 2;
  // At least 16384 cells (32 KB): the pairs near r_max, where most of a cutoff's pairs are, then
  // fall in an uncertain cell ~8x less often than with the 2048 cells 20 bins would get (measured:
  // with 2048, ~11% of the grid kernel's instructions went to resolving them).
  const GuardTable table = key_table ? make_guard_table(guard, max_cells, 16384) : GuardTable{};
  const int ncells = static_cast<int>(table.cells.size());
  // Spare counters for "outside" (nb) and for pairs left to resolve (nb + 1), so that counting
  // needs no branch; odd, so that copies of a bin sit in different banks.
  const int stride = (nb + 2) | 1;
  int copies = hist ? 32 : 1;
  while (copies > 1 && pair_kernel_smem<D>(mode, weighted, nb, ncells, copies, stride, key_table) > budget) copies /= 2;
  std::size_t smem = pair_kernel_smem<D>(mode, weighted, nb, ncells, copies, stride, key_table);
  if (!kBinned && smem > info.smem_optin)
    throw Error(ErrorKind::Resource, std::to_string(nb) + " bins need " + std::to_string(smem) +
                                         " bytes of shared memory per block; the device allows " +
                                         std::to_string(info.smem_optin));
  // The grid kernel: per-warp groups of sub-histograms, as many copies as leave room for two blocks.
  int grid_copies = hist ? 32 : 1;
  while (grid_copies > 1 &&
         pair_output_smem(mode, weighted, nb, ncells, grid_copies * kGridWarps, stride, shared_regions, key_table) > budget)
    grid_copies /= 2;
  std::size_t grid_smem =
      pair_output_smem(mode, weighted, nb, ncells, grid_copies * kGridWarps, stride, shared_regions, key_table);
  // Regions need a sub-histogram per lane (PairOutput::end_unit attributes a lane's counts to its anchor).
  if (shared_regions > 0 && hist && grid_copies < 32)
    throw Error(ErrorKind::Config, std::to_string(regions) + " jackknife regions x " + std::to_string(nb) +
                                       " bins do not fit the GPU's shared memory; use --backend cpu");
  lap("upload");
  const DeviceGrid<D> grid =
      plan_device_grid<F>(plan, da, plan.is_auto() ? nullptr : db, shift, kBinned || grid_smem <= budget, kBinned);
  if (grid.a) lap("cell index");
  // 2-D bins: the sub-histograms in shared memory when one copy a slot fits the budget; else, and
  // always with regions (a sub-histogram per lane would be 32 x the bins, and R x bins region
  // counters beside them), 64-bit atomics in global memory, pair by pair.
  bool hist_global = false;
  std::string output_note;
  if constexpr (kBinned) {
    hist_global = regions > 0 || (grid.chosen ? grid_smem : smem) > budget;
    if (hist_global) {
      copies = grid_copies = 0;
      smem = pair_tile_smem<D>(weighted);
      grid_smem = 0;
    }
    output_note = "; 2-D bins: every pair within the reach " + std::to_string(s.binning.hi()) +
                  " binned in float64 on the device, " + std::to_string(nb) + " bins " +
                  (hist_global ? std::string("counted by 64-bit atomics in global memory (") +
                                     (regions > 0 ? std::to_string(regions) + " jackknife regions" : "too many for shared memory") + ")"
                               : "in " + std::to_string(grid.chosen ? grid_copies * kGridWarps : copies) +
                                     " sub-histograms in shared memory a block");
  }
  // Mean separations: each block's sums in shared memory when they fit beside its histogram, else
  // added to the global sums pair by pair.
  bool sums_shared = false;
  if (means) {
    const std::size_t with_sums =
        grid.chosen ? pair_output_smem(mode, weighted, nb, ncells, grid_copies * kGridWarps, stride, shared_regions, key_table, true)
                    : pair_kernel_smem<D>(mode, weighted, nb, ncells, copies, stride, key_table, true);
    sums_shared = with_sums <= budget;
    if (sums_shared) (grid.chosen ? grid_smem : smem) = with_sums;
    output_note = std::string("; mean separations: the float64 key of every pair in a bin, its s and log s summed in double ") +
                  (sums_shared ? "per block in shared memory" : "by atomics in global memory (no room beside the histogram)");
  }
  DeviceBuffer<BandPair> d_bands(table.bands);
  DeviceBuffer<std::uint16_t> d_cells(table.cells);

  PairKernelArgs<typename Fast::Proxy, Exact> args{};
  args.A = grid.chosen ? grid.a->view : da.view;
  args.B = grid.chosen ? (grid.b ? grid.b : grid.a)->view : db->view;
  args.is_auto = plan.is_auto();
  args.proxy = Fast::proxy(f);
  args.exact = exact;
  args.range_lo0 = guard.lo[0];
  args.range_hi0 = guard.hi[0];
  args.range_lo1 = guard.lo[nkeys];  // Reduce and PairList take the whole range [e_0, e_nbins)
  args.range_hi1 = guard.hi[nkeys];
  args.bands = d_bands.get();
  args.cells = d_cells.get();
  args.ncells = ncells;
  args.lo0 = table.lo0;
  args.base_bits = table.base_bits;
  args.top_bits = table.top_bits;
  // The one-load lookup pays when most cells are certain (few bins per cell); with thousands of
  // bins the table is too coarse and the band walk decides every pair.
  std::size_t certain_cells = 0;
  for (auto e : table.cells) certain_cells += e < kUncertain;
  args.direct = key_table && 4 * certain_cells >= 3 * table.cells.size();
  args.shift = table.shift;
  args.edges64 = d_e64.get();
  args.nbins = nb;
  args.steps = plan.edges.steps;
  args.copies = grid.chosen ? grid_copies : copies;
  args.hist_stride = stride;
  args.counts = d_counts.get();
  args.wsums = d_wsums.get();
  args.hist_global = hist_global;
  args.sep_sums = d_sep_sums.get();
  args.log_sep_sums = d_log_sep_sums.get();
  args.sums_shared = sums_shared;
  args.settled = d_scalars.get();
  args.next_item = d_scalars.get() + 1;
  DeviceBuffer<unsigned long long> d_region_counts(std::size_t(regions) * nb);
  DeviceBuffer<double> d_region_wsums(weighted ? std::size_t(regions) * nb : 0);
  if (regions > 0) {
    d_region_counts.zero();
    if (weighted) d_region_wsums.zero();
    args.regions = regions;
    args.region_counts = d_region_counts.get();
    args.region_wsums = d_region_wsums.get();
  }
  // Per-point reductions, in the traversal's point order (the grid's cell order when it runs).
  const bool per_point = mode == OutputMode::PerPoint;
  DeviceBuffer<unsigned long long> d_point_counts_a(per_point ? A.size() : 0);
  DeviceBuffer<unsigned long long> d_point_counts_b(per_point && !plan.is_auto() ? B.size() : 0);
  DeviceBuffer<double> d_point_wsums_a(per_point && weighted ? A.size() : 0);
  DeviceBuffer<double> d_point_wsums_b(per_point && weighted && !plan.is_auto() ? B.size() : 0);
  if (per_point) {
    d_point_counts_a.zero();
    d_point_counts_b.zero();
    d_point_wsums_a.zero();
    d_point_wsums_b.zero();
    args.point_counts_a = d_point_counts_a.get();
    args.point_counts_b = plan.is_auto() ? d_point_counts_a.get() : d_point_counts_b.get();
    args.point_wsums_a = d_point_wsums_a.get();
    args.point_wsums_b = plan.is_auto() ? d_point_wsums_a.get() : d_point_wsums_b.get();
  }
  const std::uint64_t rows = (A.size() + kAnchors - 1) / kAnchors;
  args.chunks_per_row = static_cast<std::uint32_t>((B.size() + kChunk - 1) / kChunk);
  args.n_items = grid.chosen ? grid.queue->n_units : rows * args.chunks_per_row;
  GridWork work{};
  DeviceBuffer<unsigned long long> d_evaluations(1);
  d_evaluations.zero();
  if (grid.chosen) {
    work.shape = grid.shape;
    work.a_start = grid.a->start.get();
    work.b_start = (grid.b ? grid.b : grid.a)->start.get();
    work.units = grid.queue->units.get();
    // Windows: a margin far above float32 rounding of the coordinates, cell corners and image
    // shifts compared (all below ~1e-7 of the frame's scale), so no pair within r_max is missed.
    const double cutoff = grid_cutoff<F>(s.binning.hi());
    double scale = cutoff;
    for (int d = 0; d < D; ++d) {
      const double frame = grid.shape.origin[d] - shift[d];
      work.frame[d] = static_cast<float>(frame);
      work.width[d] = static_cast<float>(grid.shape.width[d]);
      scale = std::max(scale, std::abs(frame) + grid.shape.width[d] * grid.shape.cells[d]);
    }
    work.margin = static_cast<float>(1e-5 * scale);
    const double reach = cutoff * (1 + 1e-5) + 1e-5 * scale;
    work.reach2 = static_cast<float>(reach * reach);
    work.evaluations = d_evaluations.get();
  }

  // Counting tiles (counting_tiles.cuh): Euclidean counts and equal-width histograms over all
  // pairs, where their bounds leave few pairs to settle. TWOBODY_COUNTING_TILES=0 keeps the generic
  // agent (benchmarks compare the two); TWOBODY_HIST_COPIES=H forces the number of sub-histograms.
  // Counts on the tensor cores (tensor_count_tiles.cuh) run where their wider bound allows (on the
  // H100 3.8 T pairs/s against the CUDA-core tiles' 3.1–3.6 T); TWOBODY_TENSOR_COUNT=0 keeps the
  // CUDA-core counting tiles (tests and benchmarks compare the two).
  CountingTilesShape tiles{};
  TensorCountShape tensor{};
  bool use_tiles = false, use_tensor = false;
  std::string tiles_note;
  std::size_t tiles_smem = 0;
  if constexpr (std::is_same_v<F, Euclidean<D>> && D <= 3) {
    const char* env = std::getenv("TWOBODY_COUNTING_TILES");
    const bool allowed = !(env && std::string(env) == "0");
    if (allowed && !grid.chosen && !weighted && regions == 0 &&
        (mode == OutputMode::Reduce || mode == OutputMode::Histogram)) {
      const auto& edges = s.binning.edges();
      const CountingPlan cp = mode == OutputMode::Reduce ? gram_count_plan(setup.model, edges.front(), edges.back())
                                                         : equal_width_plan(setup.model, edges);
      tiles_note = "; " + cp.why;
      if (cp.usable) {
        tiles.t_hi = cp.t_hi;
        tiles.t_lo = cp.t_lo;
        tiles.band_hi = fast_detail::round_up(cp.band_hi);
        tiles.band_lo = fast_detail::round_up(cp.band_lo);
        tiles.t_diff = static_cast<float>(cp.t_hi - cp.t_lo);
        tiles.has_lo = cp.has_lo;
        tiles.inv_width = static_cast<float>(cp.inv_width);
        tiles.offset = static_cast<float>(cp.offset);
        tiles.d_min = static_cast<float>(cp.d_min);
        tiles.d_max = static_cast<float>(cp.d_max);
        tiles.g_limit = fast_detail::round_down(0.5 - cp.delta);
        tiles.lo64 = edges.front();
        tiles.inv_width64 = cp.inv_width;
        // No clamp when no pair (nor sentinel) can fall outside the bins: the first edge at 0, the
        // last beyond the data's diameter, and no ragged tile.
        const double diameter = 2 * std::sqrt(double(D)) * setup.model.M * (1 + 1e-6);
        tiles.clamp = edges.front() > 0 || !(diameter < edges.back() - 0.5 * (edges.back() - edges.front()) / nb) ||
                      A.size() % kAnchors != 0 || B.size() % kThreads != 0;
        tiles.copies = 1;
        if (mode == OutputMode::Histogram) {
          // H by seed 000's model (copies_model.hpp) from this device's limits.
          const SmLimits lim = sm_limits(info);
          const int reg_blocks = counting_tiles_histogram_blocks(D);
          const auto bytes = [&](int h) { return counting_tiles_smem(true, nb, h); };
          const double threads = static_cast<double>(A.size());
          const CopiesChoice cc = choose_copies(nb + 2, lim, kThreads, std::max(1, reg_blocks), bytes, threads, true,
                                                kCountingTilesCollisionPenalty);
          const CopiesChoice seed = choose_copies(nb + 2, lim, kThreads, std::max(1, reg_blocks), bytes, threads, false);
          tiles.copies = cc.copies;
          if (const char* h = std::getenv("TWOBODY_HIST_COPIES")) tiles.copies = std::clamp(std::atoi(h), 1, 32);
          while (tiles.copies > 1 && counting_tiles_smem(true, nb, tiles.copies) > info.smem_optin) tiles.copies /= 2;
          tiles_note += " (" + std::to_string(tiles.copies) + (tiles.copies == 1 ? " histogram copy" : " histogram copies") +
                        " interleaved by bin; the model's choice " + std::to_string(cc.copies) + ", the seed's " +
                        std::to_string(seed.copies) + ")";
        }
        tiles_smem = counting_tiles_smem(mode == OutputMode::Histogram, nb, tiles.copies);
        use_tiles = tiles_smem + 64 <= info.smem_optin;  // (and the kernel's static shared words)
      }
      const char* tc = std::getenv("TWOBODY_TENSOR_COUNT");
      if (mode == OutputMode::Reduce && !(tc && std::string(tc) == "0")) {
        const CountingPlan tp = tensor_count_plan(setup.model, edges.front(), edges.back());
        tiles_note += "; " + tp.why;
        if (tp.usable) {
          use_tensor = true;
          tensor.t_hi = tp.t_hi;
          tensor.band_hi = fast_detail::round_up(tp.band_hi);
          tensor.band_lo = fast_detail::round_up(tp.band_lo);
          tensor.t_diff = static_cast<float>(tp.t_hi - tp.t_lo);
          tensor.has_lo = tp.has_lo;
          // Items of kTensorAnchors anchors (the same partner chunks).
          args.n_items = (A.size() + kTensorAnchors - 1) / kTensorAnchors * args.chunks_per_row;
        }
      }
    }
  }

  // One stream for the kernel; while it runs, a second stream reads the work-item counter so the
  // caller's progress callback sees how far the persistent grid has come.
  cudaStream_t stream = nullptr, poll = nullptr;
  TWOBODY_CUDA_CHECK(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking));
  TWOBODY_CUDA_CHECK(cudaStreamCreateWithFlags(&poll, cudaStreamNonBlocking));
  struct Streams {
    cudaStream_t a, b;
    ~Streams() {
      cudaStreamDestroy(a);
      cudaStreamDestroy(b);
    }
  } streams{stream, poll};
  // Progress: the task counter of a launch. Pair lists launch again over the units that ran out
  // of pages (the first progress_resumed tasks) after progress_begun units were begun.
  unsigned long long progress_begun = 0, progress_resumed = 0;
  const unsigned long long progress_units = args.n_items;
  // The brute-force tiles or, when the grid was chosen, the grid agent over the work queue.
  auto launch_one = [&](auto kernel, int threads, std::size_t bytes, const char* name, const auto&... extra) {
    TWOBODY_CUDA_CHECK(cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, static_cast<int>(bytes)));
    int per_sm = 0;
    TWOBODY_CUDA_CHECK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, kernel, threads, bytes));
    const int blocks = std::max(1, per_sm) * info.sms;
    // Uploads and memsets went to the legacy stream, which a non-blocking stream does not wait for.
    TWOBODY_CUDA_CHECK(cudaDeviceSynchronize());
    TWOBODY_CUDA_CHECK(cudaMemsetAsync(d_scalars.get(), 0, 2 * sizeof(unsigned long long), stream));
    TWOBODY_CUDA_CHECK(cudaMemsetAsync(d_evaluations.get(), 0, sizeof(unsigned long long), stream));
    kernel<<<blocks, threads, bytes, stream>>>(args, extra...);
    TWOBODY_CUDA_CHECK_LAUNCH(name);
    if (plan.progress) {
      unsigned long long done = 0;
      cudaError_t q;
      while ((q = cudaStreamQuery(stream)) == cudaErrorNotReady) {
        std::this_thread::sleep_for(std::chrono::milliseconds(50));
        TWOBODY_CUDA_CHECK(cudaMemcpyAsync(&done, args.next_item, sizeof done, cudaMemcpyDeviceToHost, poll));
        TWOBODY_CUDA_CHECK(cudaStreamSynchronize(poll));
        const unsigned long long begun = progress_begun + (done > progress_resumed ? done - progress_resumed : 0);
        plan.progress(std::min(1.0, static_cast<double>(begun) / static_cast<double>(progress_units)));
      }
      if (q != cudaSuccess) TWOBODY_CUDA_CHECK(q);
    }
    TWOBODY_CUDA_CHECK(cudaStreamSynchronize(stream));
  };
  // The generic agents: the grid agent over the work queue when the grid was chosen, else the
  // brute-force tiles. Means: with the mean separation sums (histograms).
  auto launch_agents = [&]<OutputMode M, bool W, bool Means>() {
    using P = typename Fast::Proxy;
    if constexpr (kGridMetric<F>) {
      if (grid.chosen) {
        if constexpr (M == OutputMode::Histogram && !kBinned) {
          if (regions > 0) {
            if (grid.shape.images)
              return launch_one(grid_kernel<D, M, W, true, P, Exact, true, 1, Means>, kGridThreads, grid_smem, "grid_kernel", work);
            return launch_one(grid_kernel<D, M, W, false, P, Exact, true, 1, Means>, kGridThreads, grid_smem, "grid_kernel", work);
          }
        }
        if constexpr (M == OutputMode::Histogram && !W && !kBinned && !Means) {
          if (grid.anchors == 2)
            return launch_one(grid_kernel<D, M, W, true, P, Exact, false, 2>, kGridThreads, grid_smem, "grid_kernel", work);
        }
        if (grid.shape.images)
          return launch_one(grid_kernel<D, M, W, true, P, Exact, false, 1, Means>, kGridThreads, grid_smem, "grid_kernel", work);
        return launch_one(grid_kernel<D, M, W, false, P, Exact, false, 1, Means>, kGridThreads, grid_smem, "grid_kernel", work);
      }
    }
    launch_one(pair_kernel<D, M, W, P, Exact, Means>, kThreads, smem, "pair_kernel");
  };
  // The counting tiles where they were chosen, else the generic agents. (Binned pair functions and
  // mean separations take the generic agents alone: the tiles never form a pair's float64 key.)
  auto launch = [&]<OutputMode M, bool W>() {
    // P through M (always the metric's proxy), so that the launches below are instantiated only
    // when launch is called: never with a binned pair function, whose arguments the counting
    // kernels do not take.
    using P = typename FastPath<std::conditional_t<M == OutputMode::Histogram, F, F>>::Proxy;
    if (grid.chosen) return launch_agents.template operator()<M, W, false>();
    if constexpr (!W && (M == OutputMode::Reduce || M == OutputMode::Histogram) && std::is_same_v<F, Euclidean<D>> &&
                  D <= 3) {
      if constexpr (M == OutputMode::Reduce)
        if (use_tensor)
          return launch_one(tensor.has_lo ? tensor_count_kernel<D, true, P, F> : tensor_count_kernel<D, false, P, F>,
                            kThreads, 0, "tensor_count_kernel", tensor);
      if (use_tiles) {
        if constexpr (M == OutputMode::Reduce)
          return launch_one(tiles.has_lo ? counting_tiles_kernel<D, M, true, false, P, F>
                                         : counting_tiles_kernel<D, M, false, false, P, F>,
                            kThreads, tiles_smem, "counting_tiles_kernel", tiles);
        else
          return launch_one(tiles.clamp ? counting_tiles_kernel<D, M, false, true, P, F>
                                        : counting_tiles_kernel<D, M, false, false, P, F>,
                            kThreads, tiles_smem, "counting_tiles_kernel", tiles);
      }
    }
    launch_agents.template operator()<M, W, false>();
  };

  Result r;
  r.output = s.output;
  lap("tables");
  // Pair lists run several launches: the settled pairs and evaluations of all but the last, and
  // what the run's plan says about the buffer.
  std::uint64_t earlier_settled = 0, earlier_evaluated = 0;
  std::string list_note;
  // (A binned pair function makes histograms alone: nothing else is instantiated with it.)
  if constexpr (kBinned) {
    weighted ? launch_agents.template operator()<OutputMode::Histogram, true, false>()
             : launch_agents.template operator()<OutputMode::Histogram, false, false>();
  } else switch (mode) {
    case OutputMode::Histogram:
      if (means)
        weighted ? launch_agents.template operator()<OutputMode::Histogram, true, true>()
                 : launch_agents.template operator()<OutputMode::Histogram, false, true>();
      else
        weighted ? launch.template operator()<OutputMode::Histogram, true>()
                 : launch.template operator()<OutputMode::Histogram, false>();
      break;
    case OutputMode::Reduce:
      weighted ? launch.template operator()<OutputMode::Reduce, true>()
               : launch.template operator()<OutputMode::Reduce, false>();
      break;
    case OutputMode::PerPoint:
      weighted ? launch.template operator()<OutputMode::PerPoint, true>()
               : launch.template operator()<OutputMode::PerPoint, false>();
      break;
    case OutputMode::PairList: {
      // The direct output buffer (pair_pool.hpp): one launch when the pool holds the whole list,
      // else launches until every unit has written its pairs, the pages drained after each into
      // Result::pairs, or batch by batch into plan.pair_sink.
      int dev = 0, threads_per_sm = 0;
      TWOBODY_CUDA_CHECK(cudaGetDevice(&dev));
      TWOBODY_CUDA_CHECK(cudaDeviceGetAttribute(&threads_per_sm, cudaDevAttrMaxThreadsPerMultiProcessor, dev));
      std::size_t free_b = 0, total_b = 0;
      TWOBODY_CUDA_CHECK(cudaMemGetInfo(&free_b, &total_b));
      const std::uint64_t candidates =
          grid.chosen ? grid.queue->evaluations : pair_total(A.size(), B.size(), plan.is_auto());
      const std::uint64_t bound = plan.max_pairs < candidates ? plan.max_pairs + 1 : candidates;
      const unsigned long long workers = static_cast<unsigned long long>(info.sms) * static_cast<unsigned>(threads_per_sm) / 32;
      DevicePairPool pool(pair_pool_shape(free_b, bound, workers, std::getenv("TWOBODY_PAIR_PAGE_SIZE"),
                                          std::getenv("TWOBODY_PAIR_POOL_PAGES")),
                          workers, grid.chosen ? 1 : kThreads / 32);
      PairListQueue queue(args.n_items, pool.warps);
      // Grid indices back to the callers' (auto: the one set's order for both).
      const auto oa = grid.chosen ? grid.a->order.download() : std::vector<std::uint32_t>{};
      const auto ob = grid.chosen && grid.b ? grid.b->order.download() : std::vector<std::uint32_t>{};
      const std::uint32_t* order_a = oa.empty() ? nullptr : oa.data();
      const std::uint32_t* order_b = ob.empty() ? order_a : ob.data();
      const auto by_ij = [](const PairRecord& x, const PairRecord& y) { return x.i != y.i ? x.i < y.i : x.j < y.j; };
      std::uint64_t total = 0;
      const auto take = [&](std::vector<PairRecord>& batch) {
        total += batch.size();
        if (total > plan.max_pairs)
          throw Error(ErrorKind::Resource, "pair list exceeds the limit of " + std::to_string(plan.max_pairs) +
                                               " pairs; narrow the range or raise RunOptions::max_pairs");
        if (plan.pair_sink) {
          std::sort(batch.begin(), batch.end(), by_ij);
          plan.pair_sink(batch);
        } else {
          r.pairs.insert(r.pairs.end(), batch.begin(), batch.end());
        }
      };
      int launches = 0;
      do {
        args.list = pool.prepare(queue);
        args.n_items = queue.tasks();
        progress_begun = queue.first_unit();
        progress_resumed = queue.resumed_units().size();
        launch.template operator()<OutputMode::PairList, false>();
        ++launches;
        const auto scal = d_scalars.download();
        pool.drain(queue, scal[1], order_a, order_b, plan.is_auto(), take);
        if (!queue.done()) {
          earlier_settled += scal[0];
          earlier_evaluated += d_evaluations.download()[0];
        }
      } while (!queue.done());
      if (!plan.pair_sink) std::sort(r.pairs.begin(), r.pairs.end(), by_ij);
      list_note = "; pair list: " + std::to_string(total) + " pairs through a pool of " + std::to_string(pool.shape.pages) +
                  " pages of " + std::to_string(pool.shape.page_size) + " pairs, " + std::to_string(launches) +
                  (launches == 1 ? " launch" : " launches");
      break;
    }
  }
  lap("kernel");
  if (per_point) {
    // Back to the callers' point order.
    const auto take = [&](const DeviceBuffer<unsigned long long>& c, const DeviceBuffer<double>& w,
                          const DeviceGridSet<D>* sorted, PointReductions& out) {
      const auto counts = c.download();
      const auto wsums = w.download();
      const auto order = grid.chosen ? sorted->order.download() : std::vector<std::uint32_t>{};
      out.counts.assign(counts.size(), 0);
      out.weighted.assign(wsums.size(), 0.0);
      for (std::size_t k = 0; k < counts.size(); ++k) {
        const std::size_t to = order.empty() ? k : order[k];
        out.counts[to] = counts[k];
        if (!wsums.empty()) out.weighted[to] = wsums[k];
      }
    };
    take(d_point_counts_a, d_point_wsums_a, grid.a.get(), r.per_point_a);
    if (!plan.is_auto()) take(d_point_counts_b, d_point_wsums_b, grid.b.get(), r.per_point_b);
  } else if (mode != OutputMode::PairList) {
    const auto counts = d_counts.download();
    r.counts.assign(counts.begin(), counts.end());
    if (weighted) r.weighted = d_wsums.download();
    if (means) {
      r.separation_sum = d_sep_sums.download();
      r.log_separation_sum = d_log_sep_sums.download();
    }
    if (regions > 0) {
      r.regions = static_cast<std::size_t>(regions);
      const auto rc = d_region_counts.download();
      r.region_counts.assign(rc.begin(), rc.end());
      r.region_weighted = weighted ? d_region_wsums.download() : std::vector<double>{};
    }
  }
  r.info.pairs_evaluated =
      grid.chosen ? earlier_evaluated + d_evaluations.download()[0] : pair_total(A.size(), B.size(), plan.is_auto());
  r.info.pairs_settled_fp64 = earlier_settled + d_scalars.download()[0];
  r.info.threads = grid.chosen ? kGridThreads : kThreads;
  lap("download");
  // (The counting tiles' note only where they could have run.)
  r.info.plan = grid.why + list_note + (kBinned || means ? output_note : tiles_note) + "; phases: " + phases;
  return r;
}

template <class F>
Result run_matrix(const F& f, const Plan& plan) {
  constexpr int D = F::dim;
  const PointSet& A = *plan.a;
  const PointSet& B = *plan.b;
  const std::vector<double> no_shift(D, 0.0);
  DevicePoints<D> da(A, no_shift, false), db(B, no_shift, false);
  Result r;
  r.output = OutputKind::Matrix;
  r.rows = A.size();
  r.cols = B.size();
  r.matrix.resize(r.rows * r.cols);
  // Rows in chunks that fit comfortably in device memory; each chunk is copied out as it is done.
  std::size_t free_b = 0, total_b = 0;
  TWOBODY_CUDA_CHECK(cudaMemGetInfo(&free_b, &total_b));
  const std::size_t row_bytes = sizeof(double) * r.cols;
  const std::size_t rows_per_chunk = std::max<std::size_t>(1, std::min(r.rows, (free_b / 2) / row_bytes));
  DeviceBuffer<double> out(rows_per_chunk * r.cols);
  for (std::size_t row0 = 0; row0 < r.rows; row0 += rows_per_chunk) {
    const std::size_t nrows = std::min(rows_per_chunk, r.rows - row0);
    const dim3 block(32, 8);
    const dim3 grid(static_cast<unsigned>((r.cols + 31) / 32), static_cast<unsigned>((nrows + 7) / 8));
    matrix_kernel<D><<<grid, block>>>(da.view, db.view, f, static_cast<std::uint32_t>(row0),
                                      static_cast<std::uint32_t>(nrows), out.get());
    TWOBODY_CUDA_CHECK_LAUNCH("matrix_kernel");
    TWOBODY_CUDA_CHECK(cudaMemcpy(r.matrix.data() + row0 * r.cols, out.get(), nrows * row_bytes, cudaMemcpyDeviceToHost));
  }
  r.info.pairs_evaluated = static_cast<std::uint64_t>(r.rows) * r.cols;
  return r;
}

template <class F>
Result run_on_device(const F& f, const Plan& plan) {
  return plan.stat->output == OutputKind::Matrix ? run_matrix(f, plan) : run_pairs(f, plan, f, plan.edges.nbins);
}

// 2-D bins (Statistic::binning2d) with the binned pair function `bins` (binning2d.hpp), its edge
// tables copied to the device: the pairs are those of a 1-D statistic of one bin [0, cutoff) in
// the metric F (cpu/binned2d.hpp's Binned2DReach), found by the usual traversals; each is binned
// by `bins` in float64 into the plan's flat bins.
template <class BinFunction, class F>
Result run_binned2d(BinFunction bins, const F& metric, const Binned2DTables& tables, const Plan& plan) {
  const DeviceBuffer<double> outer(tables.outer.padded), inner(tables.inner.padded);
  if constexpr (requires { bins.rp2; }) {
    bins.rp2 = outer.get();
    bins.pi = inner.get();
  } else {
    bins.s2 = outer.get();
    bins.mu = inner.get();
  }
  Statistic reach = *plan.stat;
  reach.binning = Binning::from_edges({0.0, plan.stat->binning2d.cutoff()});
  reach.binning2d = Binning2D();
  Plan p = plan;
  p.stat = &reach;
  p.edges = KeyEdges::make(reach.binning, metric);
  return run_pairs(metric, p, bins, static_cast<int>(plan.stat->binning2d.nbins()));
}

// Instantiated per kind (r_p, π) or (s, μ) in run_binned2d_*.cu: the line of sight and the metric.
template <Binning2D::Kind K>
Result run_binned2d_on_device(const Plan& plan) {
  const Statistic& s = *plan.stat;
  if (s.binning2d.kind() != K) throw Error(ErrorKind::Internal, "run_binned2d_on_device: another kind of 2-D bins");
  const Binned2DTables tables = Binned2DTables::make(s.binning2d);
  constexpr bool kRpPi = K == Binning2D::Kind::RpPi;
  if (s.binning2d.midpoint_los()) {
    if (s.metric == Metric::Periodic)
      throw_config("the midpoint line of sight (survey mocks) is for open space: a periodic box has no observer");
    using Mock = std::conditional_t<kRpPi, RpPiBinsMock, SMuBinsMock>;
    return run_binned2d(Mock(tables), Euclidean<3>{}, tables, plan);
  }
  if (s.metric == Metric::Periodic) {
    using Bins = std::conditional_t<kRpPi, RpPiBins<true>, SMuBins<true>>;
    return run_binned2d(Bins(tables, s.box), PeriodicEuclidean<3>(s.box), tables, plan);
  }
  using Bins = std::conditional_t<kRpPi, RpPiBins<false>, SMuBins<false>>;
  return run_binned2d(Bins(tables, s.box), Euclidean<3>{}, tables, plan);
}

}  // namespace twobody::cuda
