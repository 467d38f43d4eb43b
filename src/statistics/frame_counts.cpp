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
  Statistic s;
  s.traversal = b.empty() ? Traversal::Auto : Traversal::Cross;
  s.metric = Metric::Periodic;
  const auto run_of = [&](std::size_t frames) {
    std::vector<double> sides{spacing * static_cast<double>(frames)};
    for (int d = 0; d < dim; ++d) sides.push_back(box.length[d]);
    s.box = Box::from_lengths(sides);
    s.reduction = reduce::Histogram{bins, static_cast<int>(frames), false};
  };
  // Frames a run: at most 64, about 4·10^6 points, and no more than the backend counts itself: a
  // backend that would send F regions elsewhere (the GPU keeps region x bin counters in shared
  // memory) gets half as many, and so on.
  std::size_t points = 0;
  for (std::size_t f = 0; f < a.size(); ++f) points += a[f].size() + (b.empty() ? 0 : b[f].size());
  const std::size_t per_frame = std::max<std::size_t>(1, points / a.size());
  std::size_t batch = std::clamp<std::size_t>(std::size_t{4'000'000} / per_frame, 1, 64);
  batch = std::min(batch, a.size());
  run_of(1);
  const std::string home = runs_on(s, opt);
  for (run_of(batch); batch > 1 && runs_on(s, opt) != home; run_of(batch)) batch = (batch + 1) / 2;

  FrameCounts out{{}, bins.nbins(), {}};
  out.counts.reserve(a.size() * bins.nbins());
  for (std::size_t first = 0; first < a.size(); first += batch) {
    const std::size_t n = std::min(batch, a.size() - first);
    run_of(n);
    const PointSet la = lift(a.subspan(first, n), spacing, "first group: ");
    PointSet lb;
    if (!b.empty()) lb = lift(b.subspan(first, n), spacing, "second group: ");
    Result r = run(s, la, b.empty() ? nullptr : &lb, opt);
    out.counts.insert(out.counts.end(), r.region_counts.begin(), r.region_counts.end());
    // The runs' bookkeeping added up; the plan is the first run's, with the batching said.
    if (first == 0) {
      out.info = std::move(r.info);
      out.info.plan = fmt::format("{} frame(s) a run, {} run(s)\n{}", batch, (a.size() + batch - 1) / batch, out.info.plan);
    } else {
      out.info.seconds += r.info.seconds;
      out.info.pairs_evaluated += r.info.pairs_evaluated;
      out.info.pairs_settled_fp64 += r.info.pairs_settled_fp64;
      out.info.n_a += r.info.n_a;
      out.info.n_b += r.info.n_b;
    }
  }
  return out;
}

}  // namespace twobody
