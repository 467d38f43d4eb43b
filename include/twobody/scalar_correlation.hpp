#pragma once
// Scalar-field correlations (issue 5), TreeCorr's KK and NK, exact: per bin the mean of κ_i κ_j
// (KK) or of κ_j (NK) over the pairs in it, weighted by w_i w_j. Both sums are weighted pair
// counts — the numerator with per-point weights w·κ, the denominator with w — so they are a
// declaration handed to the engine like any other statistic: no kernel of their own, every
// backend and traversal, float64 sums of the pair products.
#include <optional>
#include <span>

#include "twobody/correlation.hpp"
#include "twobody/statistics.hpp"

namespace twobody {

// A catalogue with a scalar κ per point (e.g. convergence, temperature); negative values are
// fine. Its weights (PointSet::weights) count when the statistic is weighted.
struct ScalarCatalogue {
  const PointSet& points;
  std::span<const double> kappa;  // one per point, finite
};

// TreeCorr's shot-noise variance of κ: Σw²(κ − κ̄)² / Σw with κ̄ = Σwκ / Σw (w = 1 unweighted).
double kappa_variance(const ScalarCatalogue& c, bool weighted);

// ξ_κκ(bin) = Σ w_i w_j κ_i κ_j / Σ w_i w_j over the distinct pairs of one catalogue (b ==
// nullptr) or the pairs across two. Columns: npairs, weight (Σ w_i w_j; npairs unweighted),
// xi_kk (NaN in a bin without weight) and varxi = var_κ(a) var_κ(b) / weight (TreeCorr's shot
// noise). Box (periodic, needs the box), open, or sky (RA, Dec in degrees; bins in degrees).
// Errors: κ not one finite value a point (Error(Input)); weighted without weights (Error(Config)).
BinnedResult kk_correlation(const ScalarCatalogue& a, const ScalarCatalogue* b, const Binning& bins,
                            CorrelationSpace space, const std::optional<Box>& box, bool weighted,
                            const RunOptions& opt = {});

// ξ_nκ(bin) = Σ w_i w_j κ_j / Σ w_i w_j over pairs of a count catalogue n (i) and a field k (j).
// With a random catalogue, TreeCorr's compensated NK − RK. Columns: npairs, weight, xi_nk,
// varxi = var_κ / weight (+ the RK one with randoms), and with randoms xi_nk_raw, rk_npairs,
// rk_weight, xi_rk.
BinnedResult nk_correlation(const PointSet& n, const ScalarCatalogue& k, const PointSet* randoms,
                            const Binning& bins, CorrelationSpace space, const std::optional<Box>& box,
                            bool weighted, const RunOptions& opt = {});

}  // namespace twobody
