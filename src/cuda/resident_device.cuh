#pragma once
// What the CUDA backend keeps of a ResidentSet (engine.hpp) between the runs of one call, and the
// pair functions the grid index serves.
#include <cmath>
#include <memory>
#include <mutex>
#include <numbers>
#include <string>
#include <type_traits>
#include <vector>

#include "twobody/detail/cuda/cuda_check.hpp"
#include "twobody/detail/cuda/device_points.cuh"
#include "twobody/detail/cuda/grid_index.cuh"
#include "twobody/detail/engine/backend.hpp"
#include "twobody/detail/exact/fast_proxies.hpp"

namespace twobody::cuda {

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
// between unit vectors (0 when the cutoff reaches the whole sphere: no grid), its square widened
// by 10^-13: the float64 rule's dot product and the vectors' norms (1 within a few ulps) move a
// counted pair's chord² by up to ~10^-14 (engine/angular_reach.hpp's bound), which is more than
// the chord itself holds below θ_max ≈ 0.001° (chord² ≈ 3·10^-10 there).
template <class F>
double grid_cutoff(double hi) {
  if constexpr (std::is_same_v<F, AngularSeparation>) {
    if (hi >= 180.0) return 0.0;
    const double chord = 2.0 * std::sin(0.5 * hi * (std::numbers::pi / 180.0));
    return std::sqrt(chord * chord + 1e-13);
  } else {
    return hi;
  }
}

// What the CUDA backend keeps of a ResidentSet (engine.hpp) for the pair function F:
//   - the frame: the set's range grown by 1% at each end, so that the random catalogues of the same
//     survey fit inside it (their extremes differ from the data's by about a point spacing);
//   - the upload, with float32 coordinates shifted to the frame's centre;
//   - the cell index of the first cross count that chose a grid, with the grid's shape. A later
//     cross count with partners inside the frame and the same cutoff uses the same cells.
// Every run that uses the set places its float32 coordinates and its cells in this frame. The
// error bounds and the cells are then those of the frame, and the frame holds every point of the
// run.
template <class F>
struct ResidentDevice final : ResidentSet::Kept {
  static constexpr int D = F::dim;
  bool weights = false, regions = false;
  int device = -1;  // the CUDA device the upload lives on
  Frame frame;
  std::vector<double> shift;  // for this F's parameters (a periodic box's L/2): another F rebuilds
  std::unique_ptr<DevicePoints<D>> points;
  // The cross counts' grid (null until one chose a grid).
  std::shared_ptr<const DeviceGridSet<D>> grid;
  GridShape grid_shape;
  int grid_anchors = 1;
  double grid_cutoff = 0;
};

// A run's use of its ResidentSet: the kept state (shared: it outlives a replacement that another
// run makes), and the lock, held from the upload through the cell index so that concurrent runs
// build the set once.
template <class F>
struct ResidentUse {
  std::shared_ptr<ResidentDevice<F>> kept;
  std::unique_lock<std::mutex> lock;
  std::string note;
};

// Finds or makes what `plan.resident` keeps for F with these weights and regions, when the run's
// partners fit its frame. Returns no `kept` (the run makes its own copies, `note` says why)
// otherwise.
template <class F>
ResidentUse<F> use_resident(const F& f, const Plan& plan, bool weights, bool regions) {
  ResidentUse<F> u;
  if (!plan.resident) return u;
  u.lock = plan.resident->lock();
  std::shared_ptr<ResidentSet::Kept>& slot = plan.resident->kept();
  auto kept = std::dynamic_pointer_cast<ResidentDevice<F>>(slot);
  // (A periodic box is its own frame.)
  const bool open_frame = (kFastSetupNeedsFrame<F> || kGridMetric<F>) && !std::is_same_v<F, PeriodicEuclidean<F::dim>>;
  int device = 0;
  TWOBODY_CUDA_CHECK(cudaGetDevice(&device));
  // The same pair function type with other parameters (another box) or another device: rebuilt.
  const bool same = kept && kept->weights == weights && kept->regions == regions && kept->device == device &&
                    make_fast_setup(f, kept->frame).shift == kept->shift;
  if (!same) {
    kept = std::make_shared<ResidentDevice<F>>();
    kept->weights = weights;
    kept->regions = regions;
    kept->device = device;
    kept->frame.dim = F::dim;
    if (open_frame) kept->frame = Frame::of(*plan.a, *plan.a).grown(0.01);
    kept->shift = make_fast_setup(f, kept->frame).shift;
    slot = kept;
    u.note = "; the first set uploaded for this and later runs (kept in its frame)";
  } else {
    u.note = "; the first set as an earlier run uploaded it";
  }
  if (open_frame && !plan.is_auto() && !kept->frame.holds(Frame::of(*plan.b, *plan.b))) {
    u.lock.unlock();
    u.note = "; the first set uploaded afresh: the partners reach beyond the frame it is kept in";
    return u;
  }
  u.kept = std::move(kept);
  return u;
}

}  // namespace twobody::cuda
