#pragma once
// The statistics twobody ships. Each is a small declaration handed to the engine (see
// src/statistics/), plus the post-processing its users expect (g(r) normalisation, ...).
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "twobody/binning.hpp"
#include "twobody/box.hpp"
#include "twobody/engine.hpp"
#include "twobody/points.hpp"
#include "twobody/result.hpp"

namespace twobody {

struct NamedColumn {
  std::string name;
  std::vector<double> values;
};

// A binned statistic: the bins, the engine's raw result (npairs, weighted sums) and derived
// per-bin columns (e.g. g(r)).
struct BinnedResult {
  Binning binning;
  Result raw;
  std::vector<NamedColumn> derived;
};

// Spatial distance histogram of one set (seed 000): counts of distinct pairs per distance bin.
// Statistic::mean_separation's columns, appended to r.derived when r.raw has the sums: ravg (the
// mean separation of each bin's pairs, weighted by w_i w_j when weighted; θ in degrees for angles)
// and meanlogr (the mean of ln s); NaN in an empty bin.
void add_mean_separation_columns(BinnedResult& r);

BinnedResult sdh(const PointSet& points, const Binning& bins, const RunOptions& opt = {});
// SDH's default bins: nbins equal bins from 0 to the diagonal of the points' bounding box (just
// above it, so that the farthest pair is counted).
Binning sdh_default_binning(const PointSet& points, std::size_t nbins);

// DD(r): pair counts, auto (b == nullptr) or cross, open space or periodic box.
BinnedResult paircount(const PointSet& a, const PointSet* b, const Binning& bins,
                       const std::optional<Box>& box, bool weighted, const RunOptions& opt = {});

// g(r) in a periodic box: pair counts over the ideal-gas count in each shell,
// N(N-1)/2 · V_shell/V (auto) or N_A N_B · V_shell/V (cross). Columns: npairs, expected, g_r.
BinnedResult rdf(const PointSet& a, const PointSet* b, const Binning& bins, const Box& box,
                 const RunOptions& opt = {});
// rdf's `expected` column: the ideal gas's pairs in each shell of `box` for na points (and nb of a
// second group; none: na's distinct pairs).
std::vector<double> rdf_expected(std::size_t na, std::optional<std::size_t> nb, const Binning& bins, const Box& box);
// Volume of the D-dimensional shell lo <= r < hi.
double shell_volume(int dim, double lo, double hi);

// Pair counts of many frames of one periodic box (a trajectory's frames, each too small to fill a
// GPU) in one engine run, exact: counts[f * nbins + k] the pairs of frame f in bin k (a[f]'s pairs
// each once, or a[f] x b[f] when b is given), as paircount of each frame would give them. The box
// orthorhombic, points of at most kMaxDim - 1 coordinates (frame_counts.cpp says how).
struct FrameCounts {
  std::vector<std::uint64_t> counts;
  std::size_t nbins = 0;
  RunInfo info;
};
FrameCounts frame_paircounts(std::span<const PointSet> a, std::span<const PointSet> b, const Binning& bins,
                             const Box& box, const RunOptions& opt = {});

// DD(θ) on the sphere from (RA, Dec) in degrees; θ bins in degrees.
BinnedResult angular(const PointSet& radec_a, const PointSet* radec_b, const Binning& bins,
                     bool weighted, const RunOptions& opt = {});
// (RA, Dec) in degrees -> unit vectors (cos Dec cos RA, cos Dec sin RA, sin Dec); weights kept.
// Throws Error(Input) for |Dec| > 90.
PointSet sky_to_unit_vectors(const PointSet& radec);

// Neighbour counts (OutputKind::PerPoint): for every point of `a` and, cross, of `b`, its partners
// at a distance in [range.lo(), range.hi()) (open space, or the periodic box's minimum image) and,
// when weighted, the sum of their weights: Result::per_point_a, per_point_b.
Result neighbour_counts(const PointSet& a, const PointSet* b, const Binning& range, const std::optional<Box>& box,
                        bool weighted, const RunOptions& opt = {});
// The Statistic neighbour_counts runs (for explain()); cross when `cross`.
Statistic neighbour_statistic(bool cross, const Binning& range, const std::optional<Box>& box, bool weighted);

// Dense matrices (OutputKind::Matrix): the value of every pair (i, j) in float64, Result::matrix
// row-major with rows = |a| and cols = |b| (auto: |a| x |a|, symmetric; its diagonal f(a, a):
// 0 for distances, an angle within ~3 mas of 0 from the arccosine of a rounded dot product).
// distance_matrix: Euclidean distances, or with a box the periodic minimum image.
// angular_matrix: angular separations in degrees from (RA, Dec) in degrees.
// The planner refuses a matrix larger than the memory it would fill (Error(Resource)).
Result distance_matrix(const PointSet& a, const PointSet* b, const std::optional<Box>& box, const RunOptions& opt = {});
Result angular_matrix(const PointSet& radec_a, const PointSet* radec_b, const RunOptions& opt = {});
// The Statistic both run (for explain()): cross when `cross`; Metric::Angular takes unit vectors.
Statistic matrix_statistic(bool cross, Metric metric, const std::optional<Box>& box);

// Wraps every coordinate into [0, L) (the CLI's --wrap).
void wrap_into_box(PointSet& p, const Box& box);

}  // namespace twobody
