#pragma once
// Jackknife regions and leave-one-region-out statistics (seed 003). The engine counts, per region
// r, the pairs with at least one point in r (Statistic::regions, Result::region_counts); these are
// the pieces around it: giving points region labels, and the jackknife mean, errors and
// covariance of a statistic computed once per left-out region.
#include <array>
#include <cstdint>
#include <string>
#include <vector>

#include "twobody/points.hpp"

namespace twobody {

// Sky regions: spherical k-means (Lloyd) on unit vectors, seeded by k-means++ from `seed`, fitted
// on at most `max_sample` points taken at an even stride (0: 1000 a region, at least 20 000 —
// enough to place the regions; the 10^5-point sample took 0.34 s of a 10^6-point w(θ) on two
// threads, 20 000 take 0.014 s) (deterministic; the result does not depend on the thread count). On data uniform over a footprint the regions come out of about
// equal area; on clustered data, of about equal numbers of points. Throws Error(Config) for
// n < 2 or more regions than distinct points.
std::vector<std::array<double, 3>> sky_region_centres(const PointSet& unit_vectors, int n, std::uint64_t seed = 1,
                                                      std::size_t max_sample = 0);
// The label of each point: its nearest centre (largest dot product; ties to the lower index).
std::vector<std::int32_t> nearest_centre(const PointSet& unit_vectors, const std::vector<std::array<double, 3>>& centres);

// Space regions fitted on points that fill a footprint (an open-space random catalogue): Euclidean
// k-means, seeded and sampled as sky_region_centres, on the points' dim() coordinates (the rest of
// each centre zero). Regions fitted on randoms hold about equal volumes of the footprint; equal
// cells of a bounding box can hold no data. Throws Error(Config) as sky_region_centres.
std::vector<std::array<double, kMaxDim>> space_region_centres(const PointSet& points, int n, std::uint64_t seed = 1,
                                                              std::size_t max_sample = 0);
// The label of each point: its nearest centre (smallest squared distance; ties to the lower index).
std::vector<std::int32_t> nearest_space_centre(const PointSet& points,
                                               const std::vector<std::array<double, kMaxDim>>& centres);

// Box regions: equal cells of the box [lo, hi) per dimension, nx·ny·…·nz of them.
struct CellLayout {
  std::vector<int> cells;     // per dimension
  std::vector<double> lo, hi;  // the region grid's extent per dimension
  int requested = 0;          // the number of regions asked for
  int total() const;
  std::string describe() const;  // "8 = 2x2x2 equal cells of [0, 100) x ..." and any change from `requested`
};
// The layout of n cells whose cells are closest to cubes; when no factorisation of n gives cells
// within 2:1 (a prime n in 3-D gives slabs), the nearest count that does (describe() says so).
// Dimensions of zero extent get one cell. Throws Error(Config) for n < 2.
CellLayout cell_layout(int n, const std::vector<double>& lo, const std::vector<double>& hi);
// The cell of each point (row-major, last dimension fastest); points on or beyond an edge go to
// the edge cell (they lie there within rounding: the extent is the data's or the box's).
std::vector<std::int32_t> cell_regions(const PointSet& p, const CellLayout& layout);

// Region labels as given (any non-negative integers, e.g. from a column) -> 0..R-1 in increasing
// order of label; `labels` keeps the original label of each region.
struct RegionNumbering {
  std::vector<std::int32_t> labels;
  // The region index of every point of p; throws Error(Input) for a label that names no region
  // (a region with no data), naming `which` and the point.
  std::vector<std::int32_t> number(const PointSet& p, const std::string& which) const;
};
RegionNumbering number_regions(const PointSet& data);

// The jackknife over R leave-one-region-out samples x_r (R x nbins, x_r[k] at r * nbins + k):
// mean x̄_k, standard errors σ_k = √((R−1)/R Σ_r (x_r,k − x̄_k)²) and covariance
// C_kl = (R−1)/R Σ_r (x_r,k − x̄_k)(x_r,l − x̄_l) (nbins x nbins, row-major).
struct JackknifeSummary {
  std::vector<double> mean, sigma, covariance;
};
JackknifeSummary jackknife_summary(const std::vector<double>& samples, std::size_t regions, std::size_t nbins);

}  // namespace twobody
