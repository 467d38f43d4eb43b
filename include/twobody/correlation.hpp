#pragma once
// Two-point correlation functions from a data catalogue and random catalogues (seed 003): DD once,
// DR_i and RR_i for every random set, summed over the sets with their normalisations, and the four
// classic estimators. The pair counts come from the engine like any other statistic (grid or all
// pairs, CPU or GPU), so every count is the exact float64 one.
#include <vector>

#include "twobody/statistics.hpp"

namespace twobody {

// Where the catalogues live: a periodic box (Cartesian), open space (Cartesian), or the sky (RA,
// Dec in degrees; bins in degrees).
enum class CorrelationSpace { Box, Open, Sky };

// Normalised pair counts: counts (or weighted sums w_i w_j) per bin over the number of distinct
// pairs (auto: N(N-1)/2, or ((Σw)² − Σw²)/2 weighted; cross: N_A N_B, or Σw_A Σw_B).
double pair_norm(const PointSet& a, const PointSet* b, bool weighted);

// The estimators from normalised counts dd, dr, rr of one bin (NaN where they divide by zero):
//   natural DD/RR − 1, Davis–Peebles DD/DR − 1, Hamilton DD·RR/DR² − 1, Landy–Szalay (DD − 2DR + RR)/RR.
struct Estimates {
  double natural, davis_peebles, hamilton, landy_szalay;
};
Estimates estimate(double dd, double dr, double rr);

// ξ (box, open) or w(θ) (sky). Columns: npairs (DD) [wnpairs], dr, rr (raw counts summed over the
// random sets) [wdr, wrr], then xi_natural, xi_davis_peebles, xi_hamilton, xi_landy_szalay from the
// normalised (weighted, when weighted) counts. Throws Error(Config) without random catalogues.
BinnedResult correlation(const PointSet& data, const std::vector<PointSet>& randoms, const Binning& bins,
                         CorrelationSpace space, const std::optional<Box>& box, bool weighted,
                         const RunOptions& opt = {});

}  // namespace twobody
