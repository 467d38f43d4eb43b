#pragma once
// Floating sums that come out the same, bit for bit, whatever order their terms are added in: on
// any number of threads, in chunks, on any number of MPI ranks.
//
// Each term is rounded once onto a grid of step 2^e chosen per run from a bound B on |term| (the
// largest |w_i w_j|, the outer bin edge times it, ...), with B < 2^(e + 62): a term becomes an
// integer of at most 62 bits, and those integers are added exactly in 128 bits (room for 2^65
// terms of the largest size). Addition of integers is associative, so every split of the work
// gives the same integer, and the float64 a Result reports is that integer correctly rounded.
// What is lost is the rounding of each term onto the grid: at most 2^(e−1) ≤ B·2^−63 a term, so a
// sum of n terms is within n·B·2^−63 of the exact sum of its float64 terms (float64 summation's
// own bound is about n·B·2^−53, and depends on the order). Terms within a factor 2^9 of B lose
// nothing: their 53 bits fit the grid. The same rule, computed the same way, serves the CPU
// (AMBER's GPU force accumulation in 64-bit fixed point is the model for the choice).
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <vector>

namespace twobody {

__extension__ typedef __int128 FixedSum;  // a sum on a SumGrid, in units of its step

struct SumGrid {
  int exponent = 0;  // the grid's step is 2^exponent
  // 2^−exponent as two factors, each a finite float64 (2^−exponent alone overflows for steps below
  // 2^−1023, bounds below about 1e-289): multiplying by either is exact.
  double inverse_step = 1.0, inverse_step2 = 1.0;

  // The grid for terms |t| <= bound (a finite bound >= 0; 0 gives the grid of 1).
  static SumGrid for_bound(double bound) {
    SumGrid g;
    if (bound > 0) g.exponent = std::ilogb(bound) + 1 - 62;
    const int first = std::min(-g.exponent, 1000);
    g.inverse_step = std::ldexp(1.0, first);
    g.inverse_step2 = std::ldexp(1.0, -g.exponent - first);
    return g;
  }
  // The term rounded to the nearest grid point (ties to even), in steps. Multiplying by powers of
  // two is exact, so the one rounding is nearbyint's.
  std::int64_t steps(double term) const {
    return static_cast<std::int64_t>(std::nearbyint(term * inverse_step * inverse_step2));
  }
  // The sum as a float64, correctly rounded (the integer's one rounding; the power of two is exact
  // unless the result is subnormal).
  double value(FixedSum s) const { return std::ldexp(static_cast<double>(s), exponent); }
};

// The grids of one run, fixed before it starts from bounds over the whole input (never over a
// piece of it), so that every piece of a split run adds onto the same grid.
struct SumGrids {
  SumGrid pair_weight;     // w_i w_j: weighted histograms, region histograms, weighted counts
  SumGrid point_weight;    // w_j: per-point weighted sums
  SumGrid separation;      // w_i w_j s: mean separations
  SumGrid log_separation;  // w_i w_j log s
  SumGrid value;           // a pair expression's values (reduce::Sum, PerPointValue's sums)
  SumGrid force;           // reduce::PointSums: force components
  SumGrid energy;          // reduce::PointSums: a body's half of a pair's energy
  SumGrid virial;          // reduce::PointSums: d·F
};

// The exact sums behind Result's float64 sums (weighted, region_weighted, separation_sum,
// log_separation_sum, per_point_*.weighted, value_sum, per_point_*.values of sums), with the grids they are on. Each float64 there is
// its entry here rounded once; runs split into pieces add these, never the float64s. Empty where
// a result was not made by the engine (saved counts read back, for example).
struct ExactSums {
  SumGrids grids;
  std::vector<FixedSum> weighted, region_weighted, separation_sum, log_separation_sum;
  std::vector<FixedSum> point_weighted_a, point_weighted_b;
  std::vector<FixedSum> value_sum, point_value_a, point_value_b;
  // reduce::PointSums: per point n × (D + 1) (forces on grids.force, the energy last on
  // grids.energy), and the totals: energy (grids.energy), virial (grids.virial).
  std::vector<FixedSum> point_sums_a, point_sums_b, totals;
};

}  // namespace twobody
