#pragma once
// A statistic is a declaration handed to the engine: which pairs (traversal), what a pair is worth
// (metric / pair function), how values are reduced (binning + output kind). Kernels, threads,
// privatised histograms and output buffers live once, in the backends.
#include "twobody/binning.hpp"
#include "twobody/binning2d.hpp"
#include "twobody/box.hpp"

namespace twobody {

// Auto: one set, each unordered pair i<j once. Cross: two sets, every (i, j).
enum class Traversal { Auto, Cross };

// Euclidean and Periodic take 1..kMaxDim coordinates; Angular takes unit vectors (x, y, z).
enum class Metric { Euclidean, Periodic, Angular };

// Seed 000's output types plus the dense matrix:
//   Reduction (type I): pairs with value in [lo, hi) counted (and weighted) into one total;
//   Histogram (type II): one count (and weighted sum) per bin;
//   PairList (type III): every pair with value in [lo, hi), as (i, j, value);
//   Matrix: the value of every pair (i, j), n1 x n2 (n x n, symmetric, for auto);
//   PerPoint (type I per point): for every point, its partners with value in [lo, hi) counted
//     (and their weights summed): Result::per_point_a and per_point_b. Auto: each such pair
//     (i, j), i < j, adds 1 to both i and j (and w_j to i's sum, w_i to j's). Cross: a point i of
//     A gets its partners in B (Σ w_j over them), a point j of B its partners in A (Σ w_i). A point
//     is never its own partner. Neighbour counts within r, local densities, ε-join cardinalities,
//     friends-of-friends degrees.
enum class OutputKind { Reduction, Histogram, PairList, Matrix, PerPoint };

struct Statistic {
  Traversal traversal = Traversal::Auto;
  Metric metric = Metric::Euclidean;
  Box box;          // Periodic only
  Binning binning;  // Histogram bins; Reduction, PairList and PerPoint use its range [lo, hi)
  OutputKind output = OutputKind::Histogram;
  bool weighted = false;  // add w_i * w_j per pair (PerPoint: the partner's w), both sets need weights
  // Jackknife regions (Histogram only): when R > 0, every point of both sets carries a label in
  // [0, R) (PointSet::set_regions) and the result adds, per region r and bin k, the pairs with at
  // least one point in r (Result::region_counts). Leaving region r out is then counts[k] − T[r][k].
  int regions = 0;
  // 2-D bins about the z axis, (r_p, π) or (s, μ) (Histogram only, 3-D Euclidean or Periodic):
  // when active, `binning` is unused and the histogram has binning2d.nbins() bins, flat index
  // outer · n_inner + inner (binning2d.hpp states the rule). Regions and weights work as above.
  Binning2D binning2d{};
  // Mean separation per bin (Corrfunc's ravg, TreeCorr's meanr/meanlogr; 1-D Histogram only): the
  // result adds Σ s and Σ log s over each bin's pairs (Result::separation_sum, log_separation_sum),
  // s the pair's natural separation (r, or θ in degrees) from its float64 key, each term times
  // w_i w_j when weighted. Divided by counts[k] (weighted[k]) they are the bin's means.
  bool mean_separation = false;
};

const char* to_string(Metric m);
const char* to_string(OutputKind k);

}  // namespace twobody
