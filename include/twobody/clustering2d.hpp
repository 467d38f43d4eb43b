#pragma once
// Anisotropic clustering about the z axis (Corrfunc's DDrppi, wp and DDsmu): pair counts in
// (r_p, π) or (s, μ) bins, ξ(r_p, π) and ξ(s, μ) from random catalogues or, in a periodic box,
// from the analytic random counts, the projected w_p(r_p) and the Legendre multipoles ξ_0, ξ_2,
// ξ_4. The counts are the engine's (Statistic::binning2d), exact like every other count.
#include <optional>
#include <string>
#include <vector>

#include "twobody/binning2d.hpp"
#include "twobody/correlation.hpp"
#include "twobody/jackknife.hpp"
#include "twobody/table.hpp"

namespace twobody {

// Per flat bin (outer · n_inner + inner): the engine's raw result and derived columns.
struct Binned2DResult {
  Binning2D binning;
  Result raw;
  std::vector<NamedColumn> derived;       // one value per flat bin
  std::vector<NamedColumn> per_outer;     // one value per r_p or s bin (w_p, multipoles)
  std::string note;                       // how the random counts were made, for the table's metadata
  // correlation_2d: the normalisations of DD, ΣDR_i, ΣRR_i (as `correlation`; with the analytic
  // RR, norm_rr is its pair total N(N−1)/2 or (Σw)²(1 − 1/N)/2 and norm_dr is 0).
  double norm_dd = 0, norm_dr = 0, norm_rr = 0;
  double norm_rd = 0;  // a cross-correlation: R1D2's (norm_dr is D1R2's)
  std::size_t n_randoms = 0;
  std::uint64_t randoms_hash = 0;  // content_hash of the random catalogues (cross: R1's, then R2's)
  bool analytic_rr = false;
  // With a jackknife: everything `correlation` gives, over the flat bins (samples, mean, sigma and
  // covariance of ξ); and the per_outer vector of every leave-one-region-out sample (w_p; or
  // ξ_0, ξ_2, ξ_4 stacked, ℓ-major: ξ_ℓ(s_i) at ℓ/2 · n_s + i), R x n at [r * n + j], with its
  // jackknife mean, sigma and covariance (n x n).
  std::optional<JackknifeResult> jackknife;
  std::vector<double> per_outer_samples;
  JackknifeSummary per_outer_jackknife;
};

// DD(r_p, π) or DD(s, μ): auto (b == nullptr) or cross, open space or periodic box (minimum image),
// raw counts and, when weighted, sums of w_i w_j (pair_product).
Binned2DResult paircount_2d(const PointSet& a, const PointSet* b, const Binning2D& bins, const std::optional<Box>& box,
                            bool weighted, const RunOptions& opt = {});

// The volume of 2-D bin (i, k): π (r_hi² − r_lo²) · 2 (π_hi − π_lo) for (r_p, π) (π = |dz| covers
// both signs of dz); 4π/3 (s_hi³ − s_lo³) · (μ_hi − μ_lo) for (s, μ).
double bin_volume_2d(const Binning2D& bins, std::size_t i, std::size_t k);

// ξ per flat bin. With random catalogues: DD, DR_i and RR_i counted by the engine, summed over the
// random sets with their normalisations (as `correlation`), and the chosen estimator. Without
// random catalogues, in a periodic box only: the analytic random counts of Corrfunc's theory wp
// and xi, RR = N(N−1)/2 · V_bin/V_box (weighted: (Σw)²(1 − 1/N)/2 · V_bin/V_box, Corrfunc's "every
// random point of the mean weight"), and ξ = DD/RR − 1 (every estimator reduces to it with
// DR = RR). Columns: npairs [wnpairs], then dr, rr [wdr, wrr] (raw, summed over the sets) or rr
// (analytic, weighted when weighted), then xi. per_outer: for (r_p, π), wp = 2 Σ_k ξ(r_p, π_k) Δπ_k
// (Corrfunc's convert_rp_pi_counts_to_wp); for (s, μ), xi0, xi2, xi4 (see multipoles()).
// Throws Error(Config) without random catalogues outside a periodic box.
//
// Jackknife (as `correlation`, seed 003): each pair counted once into region × flat-bin
// histograms; every leave-one-region-out ξ rebuilt from DD − T_DD[r], ΣDR_i − T_DR[r],
// ΣRR_i − T_RR[r] and the normalisations without region r's points (weights), never recounted.
// Automatic regions: equal cells of the box, or of the catalogues' joint bounding box in open
// space; k-means on the directions from the observer for survey mocks (LineOfSight::PairMidpoint),
// as `correlation` does on the sky. With the analytic RR (no random catalogues) the sample without
// region r is DD − T_DD[r] against the analytic RR of the box recomputed for the data without r
// (N − n_r points, Σw − Σ_r w): the same uniform randoms, as many as the data left
// (JackknifeResult::norm_rr[r] is that pair total; dr, rr are empty). The samples are of
// `estimator` (JackknifeRequest::estimator is not read: there is one ξ column); added columns
// xi_jk_mean, xi_jk_sigma per flat bin and <name>_jk_mean, <name>_jk_sigma per outer bin (wp;
// xi0, xi2, xi4). Errors as `correlation`'s.
//
// Saved counts: `reuse.rr` takes ΣRR_i from a file of a run with the same box, 2-D bins,
// weighting and regions (Error(Config) otherwise, and without random catalogues).
Binned2DResult correlation_2d(const PointSet& data, const std::vector<PointSet>& randoms, const Binning2D& bins,
                              const std::optional<Box>& box, bool weighted, Estimator estimator = Estimator::LandySzalay,
                              const RunOptions& opt = {}, const JackknifeRequest& jackknife = {},
                              const ReusedCounts& reuse = {});

// The cross-correlation of two samples over 2-D bins (cross_correlation's counts and estimators,
// correlation.hpp, per flat bin): columns npairs (D1D2) [wnpairs], d1r2, r1d2, r1r2 [wd1r2, wr1d2,
// wr1r2] and xi of `estimator`; in a periodic box without random catalogues rr (or wrr) =
// N1 N2 V_bin/V_box and xi = D1D2/R1R2 − 1. per_outer and the jackknife as correlation_2d's (mocks:
// regions on the sky about the observer).
Binned2DResult cross_correlation_2d(const PointSet& data1, const PointSet& data2, const std::vector<PointSet>& randoms1,
                                    const std::vector<PointSet>& randoms2, const Binning2D& bins,
                                    const std::optional<Box>& box, bool weighted,
                                    Estimator estimator = Estimator::LandySzalay, const RunOptions& opt = {},
                                    const JackknifeRequest& jackknife = {}, const ReusedCounts& reuse = {});

// The counts of a correlation_2d run with random catalogues, to write (write_counts) and reuse
// (ReusedCounts::rr): space Box with a box, else Open, and the 2-D bins. Throws Error(Config) for
// a run with the analytic RR (nothing was counted that a file could save).
SavedCounts saved_counts(const Binned2DResult& r, const std::optional<Box>& box, bool weighted);

// w_p(r_p_i) = 2 Σ_k ξ(r_p_i, π_k) (π_{k+1} − π_k), one value per r_p bin.
std::vector<double> projected_wp(const Binning2D& rppi, const std::vector<double>& xi);
// ξ_ℓ(s_i) = (2ℓ + 1) Σ_k ξ(s_i, μ_k) P_ℓ(μ̄_k) (μ_{k+1} − μ_k), μ̄_k the bin's midpoint: the
// midpoint rule for (2ℓ + 1) ∫_0^μmax ξ(s, μ) P_ℓ(μ) dμ (ξ is even in μ). One value per s bin.
std::vector<double> multipoles(const Binning2D& smu, const std::vector<double>& xi, int ell);

// Columns <outer>_lo, <outer>_hi, <inner>_lo, <inner>_hi, npairs, [wnpairs], the derived columns:
// one row per flat bin (inner fastest, as Corrfunc's DDrppi and DDsmu print them).
Table binned2d_table(const Binned2DResult& r);
// One row per outer bin: <outer>_lo, <outer>_hi, then the per_outer columns.
Table per_outer_table(const Binned2DResult& r);

}  // namespace twobody
