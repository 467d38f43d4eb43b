#pragma once
// The grid index on the device for one run: the cells' shape (windowed columns in 3-D, or
// isotropic cells of r_max or r_max / 2), both sets sorted by cell, and the work queue, whose
// candidate pairs the dispatch weighs against brute force (agent_choice.hpp).
#include <algorithm>
#include <array>
#include <cmath>
#include <memory>
#include <string>
#include <vector>

#include "twobody/detail/cuda/agent_choice.hpp"
#include "twobody/detail/cuda/grid_kernel.cuh"
#include "twobody/detail/cuda/resident_device.cuh"
#include "twobody/detail/engine/traversal_cost.hpp"

namespace twobody::cuda {

// Cells for the windowed kernel in 3-D: columns r_max / R wide across the first two axes and
// r_max deep along the last (the windows cut runs along it to what the anchors can reach, so
// deeper cells cost nothing there and fill the warps' units). R trades the evaluations a column
// adds beyond the sphere — per anchor ρ r³ V(R), V the volume the windows leave (1: 18.0,
// 2: 11.1, 3: 8.77, 4: 7.56, 5: 6.78 r³ for the full shell, against the sphere's 4.19) — against
// the fixed cost of one more column run per warp (about 48 evaluations' worth: the window, two
// searches, a partial tile), (2R + 1)² runs. Returns false (keep the isotropic cells) where a
// periodic axis holds fewer than three cells of r_max, so images would not be unique.
// `density`: partners per unit volume around a typical anchor.
inline bool windowed_geometry(const Frame& frame, double rmax, const Box* box, double density, std::int64_t max_cells,
                              int only, GridGeometry& geo, int* reach) {
  if (frame.dim != 3) return false;
  std::array<double, 3> origin{}, extent{};
  for (int d = 0; d < 3; ++d) {
    if (box) {
      extent[d] = box->length[d];
    } else {
      origin[d] = frame.lo[d];
      extent[d] = frame.hi[d] - frame.lo[d];
    }
  }
  const double r = rmax * (1.0 + 1e-6);
  if (box && std::floor(extent[2] / r) < 3) return false;
  static constexpr double kWindowVolume[] = {18.0, 11.11, 8.77, 7.56, 6.78};
  // `only`: a fixed R for tests and tuning (TuningPolicy::grid_reach, where the box allows it).
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

// Both sets in cell order and the work queue (when built), with what the dispatch reads of it.
template <int D>
struct DeviceGrid {
  GridShape shape;
  std::shared_ptr<const DeviceGridSet<D>> a;  // (kept across runs: ResidentDevice)
  std::unique_ptr<DeviceGridSet<D>> b;        // null for auto
  std::unique_ptr<GridWorkQueue> queue;
  int anchors = 1;  // per lane (grid_kernel's Anchors)
  GridMeasure measure;
  const DeviceGridSet<D>& partners() const { return b ? *b : *a; }
};

// The density a typical anchor sees — on clustered data far above the mean, on angles that of a
// surface — from the occupancy of cells of r_max: Σ_c n_A(c) n_B(c) / (n_A V_cell).
template <int D>
double anchor_density(const Frame& frame, double cutoff, const Box* box, std::int64_t max_cells, const DeviceSet& a,
                      const DeviceSet* b, std::size_t n_a) {
  const GridGeometry coarse = make_grid_geometry(frame, cutoff, box, 1, max_cells);
  const GridShape cs = grid_shape(coarse);
  const auto ca = count_cells(cs, a);
  const auto cb = b ? count_cells(cs, *b) : ca;
  double sum = 0, volume = 1;
  for (std::size_t c = 0; c < ca.size(); ++c) sum += static_cast<double>(ca[c]) * cb[c];
  for (int d = 0; d < D; ++d) volume *= coarse.width[d];
  return sum / (std::max<double>(1.0, static_cast<double>(n_a)) * volume);
}

// The cells' shape for a new grid: windowed columns in 3-D where they pay, else isotropic cells;
// two anchors a lane where cells hold many (unweighted 1-D histograms through the windows).
template <int D>
void shape_device_grid(DeviceGrid<D>& g, const Frame& frame, double cutoff, const Box* box, std::int64_t n_points,
                       std::int64_t max_cells, double density, bool two_anchor_stat, const TuningPolicy& policy) {
  GridGeometry geo;
  int reach[kMaxDim] = {};
  const bool windowed = windowed_geometry(frame, cutoff, box, density, max_cells, policy.grid_reach, geo, reach);
  if (!windowed) {
    // Cells of r_max / 2 (a 5^D neighbourhood, fewer evaluations) while they hold 16 points on
    // average, so that a warp's unit of 32 anchors spans one or two cells; r_max otherwise.
    int refine = D <= 3 ? 2 : 1;
    geo = make_grid_geometry(frame, cutoff, box, refine, max_cells);
    if (refine > 1 && geo.total * 16 > n_points) {
      refine = 1;
      geo = make_grid_geometry(frame, cutoff, box, refine, max_cells);
    }
    for (int d = 0; d < D; ++d) reach[d] = refine;
  }
  g.shape = grid_shape(geo, reach);
  double cell_volume = 1;
  for (int d = 0; d < D; ++d) cell_volume *= geo.width[d];
  const bool two_fit = windowed && g.shape.images && two_anchor_stat;
  // (On the H100: 10^7 points, r < 100, ~460 points a cell, kernel 405 -> ~360 ms; at ~130 a cell,
  // 10^6 r < 100, no gain.)
  if (two_fit && density * cell_volume >= policy.two_anchor_occupancy) g.anchors = 2;
  if (policy.grid_anchors) g.anchors = policy.grid_anchors == 2 && two_fit ? 2 : 1;
}

// "a grid of AxBxC cells (reach ...)": the grid's part of the run's plan.
template <int D>
std::string describe_device_grid(const DeviceGrid<D>& g, bool reuse) {
  std::string w = "a grid of ";
  for (int d = 0; d < D; ++d) {
    if (d) w += 'x';
    w += std::to_string(g.shape.cells[d]);
  }
  w += " cells (reach";
  for (int d = 0; d < D; ++d) {
    w += d ? 'x' : ' ';
    w += std::to_string(g.shape.reach[d]);
  }
  return w + (g.shape.images ? ", windows along the last axis" : ", minimum images") +
         (g.anchors == 2 ? ", two anchors a lane" : "") + (reuse ? ", the first set's cells as an earlier run made them" : "") +
         ")";
}

// Builds the grid the layout asks for and counts its candidate pairs, or says why there is none.
// `two_anchor_stat`: an unweighted 1-D histogram without regions or sums (two anchors a lane may
// serve it). `kept`: the first set as a ResidentSet keeps it (its frame, and the cell index of an
// earlier cross count), or null; a grid the cost model takes is kept for later cross counts.
template <class F>
DeviceGrid<F::dim> build_device_grid(const Plan& plan, const DevicePoints<F::dim>& da, const DevicePoints<F::dim>* db,
                                     const std::vector<double>& shift, const OutputLayout& layout, bool two_anchor_stat,
                                     const TuningPolicy& policy, ResidentDevice<F>* kept) {
  constexpr int D = F::dim;
  DeviceGrid<D> g;
  if (!layout.grid_wanted) {
    g.measure.why = layout.no_grid_why;
    return g;
  }
  if constexpr (!kGridMetric<F>) {
    g.measure.why = "brute force: the grid path serves Euclidean cutoffs";
    return g;
  } else {
    const Statistic& s = *plan.stat;
    const std::uint64_t brute = pair_total(plan.a->size(), plan.b->size(), plan.is_auto());
    const std::int64_t n_points = static_cast<std::int64_t>(plan.a->size() + (plan.is_auto() ? 0 : plan.b->size()));
    const std::int64_t max_cells = std::max<std::int64_t>(1, std::min<std::int64_t>(std::int64_t(1) << 26, n_points));
    const Box* box = s.metric == Metric::Periodic ? &s.box : nullptr;
    const double cutoff = grid_cutoff<F>(s.binning().hi());
    if (!(cutoff > 0)) {
      g.measure.why = "brute force: the cutoff reaches the whole sphere";
      return g;
    }
    // A cross count against partners in the kept frame reuses the first set's cells (and their
    // shape, chosen by the first cross count of the call).
    const bool reuse = kept && kept->grid && !plan.is_auto() && kept->grid_cutoff == cutoff;
    if (reuse) {
      g.shape = kept->grid_shape;
      g.anchors = two_anchor_stat ? kept->grid_anchors : 1;
    } else {
      Frame frame;
      frame.dim = D;  // (a periodic box: the box)
      if (kept) frame = kept->frame;
      else if (!box) frame = Frame::of(*plan.a, *plan.b);
      const double density =
          D == 3 ? anchor_density<D>(frame, cutoff, box, max_cells, da.view, db ? &db->view : nullptr, plan.a->size()) : 0;
      shape_device_grid(g, frame, cutoff, box, n_points, max_cells, density, two_anchor_stat, policy);
    }
    std::int64_t span = 1;  // cells in one neighbourhood
    for (int d = 0; d < D; ++d) span *= std::min<std::int64_t>(g.shape.cells[d], 2 * g.shape.reach[d] + 1);
    if (!layout.grid_forced &&
        (static_cast<std::int64_t>(g.shape.total) <= span || brute < kCudaTraversalCost.min_pairs_for_grid)) {
      g.measure.why = "brute force: the cutoff spans the whole extent, or too few pairs for a grid to pay";
      return g;
    }
    if (reuse) g.a = kept->grid;
    else g.a = std::make_shared<const DeviceGridSet<D>>(g.shape, da.view, shift.data());
    if (db) g.b = std::make_unique<DeviceGridSet<D>>(g.shape, db->view, shift.data());
    g.queue = std::make_unique<GridWorkQueue>(g.shape, g.a->start.get(), g.partners().start.get(), plan.is_auto(),
                                              32u * static_cast<std::uint32_t>(g.anchors));
    g.measure.built = true;
    g.measure.evaluations = g.queue->evaluations;
    g.measure.units = g.queue->n_units;
    g.measure.shape = describe_device_grid(g, reuse);
    if (kept && !plan.is_auto() && !reuse && grid_taken(layout, g.measure, brute)) {
      kept->grid = g.a;
      kept->grid_shape = g.shape;
      kept->grid_anchors = g.anchors;
      kept->grid_cutoff = cutoff;
    }
    return g;
  }
}

// The grid agent's view of the grid: the cell ranges, the work queue and the windows' frame. The
// windows' margin is far above float32 rounding of the coordinates, cell corners and image shifts
// compared (all below ~1e-7 of the frame's scale), so no pair within r_max is missed.
template <int D>
GridWork grid_work(const DeviceGrid<D>& grid, double cutoff, const std::vector<double>& shift,
                   unsigned long long* evaluations) {
  GridWork work{};
  work.shape = grid.shape;
  work.a_start = grid.a->start.get();
  work.b_start = grid.partners().start.get();
  work.units = grid.queue->units.get();
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
  work.evaluations = evaluations;
  return work;
}

}  // namespace twobody::cuda
