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
__extension__ typedef unsigned __int128 UFixedSum;

// An exact sum of 192 bits (two's complement; `lo` the low 128 bits, `hi` the top 64): for sums
// whose terms span more than 62 bits of their grid. Forces need it: the grid keeps 62 bits of the
// ordinary pairs' terms, and one close contact's term may be 2^100 steps (docs/exactness.md#forces).
struct WideSum {
  UFixedSum lo = 0;
  std::int64_t hi = 0;

  // An integer-valued double (|v| < 2^190), exactly.
  static WideSum of_integer(double v) {
    WideSum w;
    if (std::fabs(v) < 0x1p63) {
      w.add(static_cast<std::int64_t>(v));
      return w;
    }
    int e = 0;
    const double m = std::frexp(std::fabs(v), &e);  // |v| = m·2^e, m in [1/2, 1), e >= 64
    const auto mant = static_cast<std::uint64_t>(std::ldexp(m, 53));
    const int shift = e - 53;  // >= 11
    if (shift < 128) {
      w.lo = static_cast<UFixedSum>(mant) << shift;
      w.hi = shift > 75 ? static_cast<std::int64_t>(mant >> (128 - shift)) : 0;
    } else {
      w.hi = static_cast<std::int64_t>(mant << (shift - 128));
    }
    return v < 0 ? -w : w;
  }
  void add(std::int64_t v) {
    const UFixedSum old = lo;
    lo += static_cast<UFixedSum>(static_cast<FixedSum>(v));
    hi += (v < 0 ? -1 : 0) + (lo < old ? 1 : 0);
  }
  WideSum& operator+=(const WideSum& o) {
    const UFixedSum old = lo;
    lo += o.lo;
    hi += o.hi + (lo < old ? 1 : 0);
    return *this;
  }
  WideSum operator-() const {
    WideSum w;
    w.lo = ~lo + 1;
    w.hi = static_cast<std::int64_t>(~static_cast<std::uint64_t>(hi) + (w.lo == 0 ? 1 : 0));
    return w;
  }
  bool operator==(const WideSum&) const = default;
  // The sum times 2^exponent, correctly rounded to float64: the top 64 bits with the rest as a
  // sticky bit, converted once.
  double value(int exponent) const {
    if (hi < 0) return -(-*this).value(exponent);
    const auto h = static_cast<std::uint64_t>(hi);
    const auto lo_hi = static_cast<std::uint64_t>(lo >> 64), lo_lo = static_cast<std::uint64_t>(lo);
    if (h == 0 && lo_hi == 0) return std::ldexp(static_cast<double>(lo_lo), exponent);
    // Bits above the low 64: shift the whole down by `s` so that 64 bits remain, OR the rest in.
    const int top = h ? 128 + 64 - __builtin_clzll(h) : 64 + 64 - __builtin_clzll(lo_hi);  // bit length
    const int s = top - 64;
    UFixedSum part;  // bits [s, s + 64)
    bool sticky;
    if (s >= 128) {
      part = static_cast<UFixedSum>(h) >> (s - 128);
      sticky = lo != 0 || (s > 128 && (h & ((std::uint64_t(1) << (s - 128)) - 1)) != 0);
    } else {
      part = (lo >> s) | (s ? static_cast<UFixedSum>(h) << (128 - s) : 0);
      sticky = (lo & ((static_cast<UFixedSum>(1) << s) - 1)) != 0;
    }
    const std::uint64_t top64 = static_cast<std::uint64_t>(part) | (sticky ? 1u : 0u);
    return std::ldexp(static_cast<double>(top64), exponent + s);
  }
};

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
  // The term rounded to the nearest grid point as a wide sum (|term| below 2^(exponent + 190)).
  WideSum wide_steps(double term) const {
    return WideSum::of_integer(std::nearbyint(term * inverse_step * inverse_step2));
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
  // grids.energy), and the totals: energy (grids.energy), virial (grids.virial). Wide: a close
  // contact's terms lie far above the grid's 62 bits.
  std::vector<WideSum> point_sums_a, point_sums_b, totals;
};

}  // namespace twobody
