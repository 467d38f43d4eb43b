// Pair counts of many frames of one periodic box in one engine run (statistics.hpp:
// frame_paircounts). Molecular-dynamics trajectories hold thousands of frames of 10^3–10^5 atoms,
// each too small to fill a GPU: one run a frame spends its time on uploads, cell indexes and
// launches, not on pairs. Here frame f's points are lifted into one more periodic coordinate,
// first, of value f·H (H = 2 r_max, the box's new side F·H), and labelled as jackknife region f:
//   - no pair across frames counts: their separation along the new axis is at least H > r_max;
//   - a pair within a frame differs by exactly 0 along it, so its key is 0 + the frame's own
//     key, summed in the same order: the float64 rule's key bit for bit;
//   - a region's counts are the pairs with a point in it (reduction.hpp), here exactly frame f's.
// So the engine's cell grids, agents and exact settlement serve every frame in one launch.
#include <fmt/format.h>

#include <algorithm>

#include "twobody/error.hpp"
#include "twobody/statistics.hpp"

namespace twobody {

namespace {

// The frames lifted into dim + 1 coordinates, frame f at f·spacing along the first.
PointSet lift(std::span<const PointSet> frames, double spacing, const char* which) {
  const int dim = frames.front().dim();
  std::size_t n = 0;
  for (const PointSet& f : frames) {
    if (f.dim() != dim) throw_input(fmt::format("{}frames of {} and {} coordinates", which, dim, f.dim()));
    n += f.size();
  }
  PointSet out(dim + 1, n);
  std::vector<std::int32_t> labels(n);
  std::size_t at = 0;
  for (std::size_t f = 0; f < frames.size(); ++f) {
    const PointSet& p = frames[f];
    std::fill_n(out.coord(0).begin() + static_cast<std::ptrdiff_t>(at), p.size(), static_cast<double>(f) * spacing);
    for (int d = 0; d < dim; ++d) std::ranges::copy(p.coord(d), out.coord(d + 1).begin() + static_cast<std::ptrdiff_t>(at));
    std::fill_n(labels.begin() + static_cast<std::ptrdiff_t>(at), p.size(), static_cast<std::int32_t>(f));
    at += p.size();
  }
  out.set_regions(std::move(labels));
  return out;
}

}  // namespace

FrameCounts frame_paircounts(std::span<const PointSet> a, std::span<const PointSet> b, const Binning& bins,
                             const Box& box, const RunOptions& opt) {
  if (a.empty()) throw_config("frame_paircounts: no frames");
  if (!b.empty() && b.size() != a.size())
    throw_config(fmt::format("frame_paircounts: {} frames of the first group and {} of the second", a.size(), b.size()));
  const int dim = a.front().dim();
  if (dim + 1 > kMaxDim) throw_config(fmt::format("frame_paircounts: points of at most {} coordinates", kMaxDim - 1));
  if (box.triclinic() || box.dim != dim)
    throw_config("frame_paircounts: one orthorhombic box of the points' dimension for every frame");
  const double spacing = 2.0 * bins.hi(bins.nbins() - 1);
  std::vector<double> sides{spacing * static_cast<double>(a.size())};
  for (int d = 0; d < dim; ++d) sides.push_back(box.length[d]);

  const PointSet la = lift(a, spacing, "first group: ");
  PointSet lb;
  if (!b.empty()) lb = lift(b, spacing, "second group: ");
  Statistic s;
  s.traversal = b.empty() ? Traversal::Auto : Traversal::Cross;
  s.metric = Metric::Periodic;
  s.box = Box::from_lengths(sides);
  s.reduction = reduce::Histogram{bins, static_cast<int>(a.size()), false};
  Result r = run(s, la, b.empty() ? nullptr : &lb, opt);
  return {std::move(r.region_counts), bins.nbins(), std::move(r.info)};
}

}  // namespace twobody
