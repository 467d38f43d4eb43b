#pragma once
// What the pairs of a statistic reduce into: one type per reduction, each carrying exactly the
// options that mean something for it (jackknife regions and mean separations only on histograms),
// so that a statistic cannot ask for a combination no backend gives. The engine validates, lays
// out, merges (chunked runs, MPI) and runs each type in one place (src/engine/reductions.hpp); a
// backend takes a type by giving its CPU sink or CUDA output for it.
#include <variant>

#include "twobody/binning.hpp"
#include "twobody/binning2d.hpp"
#include "twobody/pair_force.hpp"

namespace twobody::reduce {

// Seed 000's type I: the pairs with value in [range.lo(), range.hi()) counted (and weighted) into
// one total, Result::counts[0] (weighted[0]). Only the range's two ends matter. include_hi: the
// range is [lo, hi] instead (ε-joins are "within ε"): the engine makes the last key edge the
// next double above key(hi), so a pair at exactly hi is in.
struct Count {
  Binning range;
  bool include_hi = false;
};

// Seed 000's type II: one count (and weighted sum) per bin, Result::counts[k] (weighted[k]).
struct Histogram {
  Binning bins;
  // Jackknife regions: when R > 0, every point of both sets carries a label in [0, R)
  // (PointSet::set_regions) and the result adds, per region r and bin k, the pairs with at least
  // one point in r (Result::region_counts). Leaving region r out is then counts[k] − T[r][k].
  int regions = 0;
  // Mean separation per bin (Corrfunc's ravg, TreeCorr's meanr/meanlogr): the result adds Σ s and
  // Σ log s over each bin's pairs (Result::separation_sum, log_separation_sum), s the pair's
  // natural separation (r, or θ in degrees) from its float64 key, each term times w_i w_j when
  // weighted. Divided by counts[k] (weighted[k]) they are the bin's means.
  bool mean_separation = false;
};

// Type II over 2-D bins about a line of sight, (r_p, π) or (s, μ) (3-D Euclidean or periodic
// points): bins.nbins() counters, flat index outer · n_inner + inner (binning2d.hpp states the
// rule). Regions and weights as for Histogram; the mean separation is that along the outer axis
// (r_p or s: Corrfunc's rpavg, savg).
struct Histogram2D {
  Binning2D bins;
  int regions = 0;
  bool mean_separation = false;
};

// Seed 000's type III: every pair with value in [range.lo(), range.hi()), as (i, j, value) in
// Result::pairs sorted by (i, j) (or handed to RunOptions::pair_sink).
struct PairList {
  Binning range;
  bool include_hi = false;  // [lo, hi], as Count's
};

// Type I per point: for every point, its partners with value in [range.lo(), range.hi()) counted
// (and their weights summed): Result::per_point_a and per_point_b. Auto: each such pair (i, j),
// i < j, adds 1 to both i and j (and w_j to i's sum, w_i to j's). Cross: a point i of A gets its
// partners in B (Σ w_j over them), a point j of B its partners in A (Σ w_i). A point is never its
// own partner. Neighbour counts within r, local densities, ε-join cardinalities, friends-of-friends
// degrees.
struct PerPoint {
  Binning range;
  bool include_hi = false;  // [lo, hi], as Count's
};

// The value of every pair (i, j): Result::matrix, n1 x n2 (n x n, symmetric, for auto).
struct Matrix {};

// k nearest neighbours: for every point of the first set, the k partners of smallest float64 key,
// ties broken by the smaller partner index (Result::nearest). Auto: the partners are the set's
// other points (a point is never its own neighbour; its duplicates are); cross: the second set.
// Vectors only (twobody/vectors.hpp, twobody/joins.hpp).
struct Nearest {
  int k = 1;
};

// Type I over a pair expression's value (twobody/expression.hpp, run_expression): the sum of
// the values of every pair that has one (NaN, a --where that is false: none) in
// Result::value_sum[0], their number in counts[0]. An exact sum on a grid fixed for the run
// (twobody/exact_sums.hpp), so every thread count and split gives the same bits.
struct Sum {};

// Per point, its partners' values (as Sum takes them) reduced: Result::per_point_a.values (and
// per_point_b, cross), how many partners gave one in counts. Auto: a pair (i, j) adds to both i
// and j. Sum: exact sums (0 without partners); Min, Max: the least or largest (NaN without
// partners; −0 below +0).
struct PerPointValue {
  enum class Of { Sum, Min, Max };
  Of of = Of::Sum;
};

// Per point, the sum of a vector pair value: short-range forces and energies (twobody/forces.hpp).
// Every pair (i, j), i < j, with separation in [0, range.hi()) — `range` starts at 0, one bin — is
// evaluated once in float64 (twobody/pair_force.hpp): d = x_i − x_j, energy E, force F = f·d; it
// adds (F, E/2) to i and (−F, E/2) to j (cross: the second set's point is j), as exact sums, so
// Σ F is exactly 0 on the grid and no thread count or point order changes a bit. Result: per
// point (per_point_a, cross also per_point_b) its partners in `counts` and the D force components
// and the energy in `sums` (n × (D + 1), row-major); `totals` = {Σ E, the virial Σ d·F}.
// The grids are fixed before the run: each keeps 62 bits of every term of the pairs at least
// `fine` apart (0: `closest`), and the sums are 192 bits wide, so that the few closer pairs'
// terms (a close contact's force is 2^100 of the others') add exactly too. `closest` (> 0) is a
// lower bound on the separation of every pair within the cutoff; a closer pair is an
// Error(Input) naming it. short_range_forces finds both first.
struct PointSums {
  Binning range;
  PairForce force;
  double closest = 0;
  double fine = 0;
};

}  // namespace twobody::reduce

namespace twobody {

using Reduction = std::variant<reduce::Count, reduce::Histogram, reduce::Histogram2D, reduce::PairList,
                               reduce::PerPoint, reduce::Matrix, reduce::Nearest, reduce::Sum,
                               reduce::PerPointValue, reduce::PointSums>;

}  // namespace twobody
