#pragma once
// Two-point correlation functions from a data catalogue and random catalogues (seed 003): DD once,
// DR_i and RR_i for every random set, summed over the sets with their normalisations, and the four
// classic estimators. The pair counts come from the engine like any other statistic (grid or all
// pairs, CPU or GPU), so every count is the exact float64 one.
#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "twobody/binning2d.hpp"
#include "twobody/statistics.hpp"

namespace twobody {

// Where the catalogues live: a periodic box (Cartesian), open space (Cartesian), or the sky (RA,
// Dec in degrees; bins in degrees).
enum class CorrelationSpace { Box, Open, Sky };
// The metric a correlation function counts in: Sky angular, Box periodic, Open Euclidean.
Metric metric_of(CorrelationSpace space);

// Normalised pair counts: counts (or weighted sums w_i w_j) per bin over the number of distinct
// pairs (auto: N(N-1)/2, or ((Σw)² − Σw²)/2 weighted; cross: N_A N_B, or Σw_A Σw_B).
double pair_norm(const PointSet& a, const PointSet* b, bool weighted);

// The estimators from normalised counts dd, dr, rr of one bin (NaN where they divide by zero):
//   natural DD/RR − 1, Davis–Peebles DD/DR − 1, Hamilton DD·RR/DR² − 1, Landy–Szalay (DD − 2DR + RR)/RR.
struct Estimates {
  double natural, davis_peebles, hamilton, landy_szalay;
};
Estimates estimate(double dd, double dr, double rr);

enum class Estimator { Natural, DavisPeebles, Hamilton, LandySzalay };
const char* to_string(Estimator e);  // "natural", "davis-peebles", "hamilton", "landy-szalay"
Estimator parse_estimator(const std::string& name);  // throws Error(Config)
// The estimate of estimator `e` among `x`.
double estimate_of(const Estimates& x, Estimator e);
double estimate(Estimator e, double dd, double dr, double rr);

// Jackknife errors (seed 003): the catalogues cut into R regions; every pair counted once, into
// its bin and into T[r][k] for the region(s) of its points (Statistic::regions), so that each
// leave-one-region-out count is DD[k] − T_DD[r][k] (and DR, RR, weighted sums likewise) with the
// normalisations of the catalogues without region r. Never a recount.
struct JackknifeRequest {
  // > 0: cut into this many regions: on the sky by k-means on the random catalogues' unit vectors
  // (the data's when there are none), in open space by Euclidean k-means on the random catalogues
  // (equal cells of the joint bounding box of all catalogues when there are none), in a periodic
  // box by equal cells of the box; every catalogue takes the nearest region. Fitted on the randoms,
  // regions hold about equal areas (volumes) of the footprint whatever the data's clustering (as
  // TreeCorr's patches from a random catalogue); see jackknife.hpp.
  int regions = 0;
  // Use the catalogues' own labels (PointSet::regions(), e.g. ReadOptions::region_column), any
  // non-negative integers; every label of a random catalogue must be one the data have.
  bool use_labels = false;
  Estimator estimator = Estimator::LandySzalay;
  std::uint64_t seed = 1;  // k-means++ seed (sky)
  // Open space only: the points lie about an observer at the origin (survey mocks in comoving
  // Cartesian coordinates, sky_to_cartesian), so automatic regions are patches of sky, k-means on
  // the points' directions as for w(θ), not cells of the bounding box.
  bool sky_about_origin = false;
};

struct JackknifeResult {
  std::size_t regions = 0;
  std::string layout;                // how the regions were made
  // Automatic regions fitted on the data's own points (no random catalogues to fit on): on
  // clustered data they hold about equal numbers of points, not equal areas (the CLI notes it).
  bool fitted_on_data = false;
  std::vector<std::int32_t> labels;  // use_labels: the original label of each region index
  // Sky regions by k-means: their centres (unit vectors). Saved with the counts, so that a run
  // reusing a saved RR labels its data by the very regions the RR was counted in (k-means on
  // another data catalogue would give other regions).
  std::vector<std::array<double, 3>> centres;
  Estimator estimator = Estimator::LandySzalay;
  // Per region: data points and random points (summed over the random sets) in it.
  std::vector<std::size_t> n_data, n_randoms;
  // Per region and bin, at [r * nbins + k]: pairs with at least one point in region r (T[r][k]);
  // dr and rr summed over the random sets; w* the weighted sums (when weighted).
  std::vector<std::uint64_t> dd, dr, rr;
  std::vector<double> wdd, wdr, wrr;
  // Per left-out region: the normalisations of DD, ΣDR_i, ΣRR_i without it, and the estimator
  // without it (R x nbins, at [r * nbins + k]).
  std::vector<double> norm_dd, norm_dr, norm_rr;
  // A cross-correlation: dd, dr, rr hold D1D2, ΣD1R2, ΣR1R2, and these R1D2's region counts and
  // normalisations without each region (empty for an auto-correlation).
  std::vector<std::uint64_t> rd;
  std::vector<double> wrd, norm_rd;
  std::vector<double> samples;
  // The jackknife mean, standard errors √((R−1)/R Σ(x_r − x̄)²) and covariance (nbins x nbins).
  std::vector<double> mean, sigma, covariance;
};

// BinnedResult with the jackknife, when one was asked for, and the normalisations of DD, ΣDR_i
// and ΣRR_i (pair_norm, summed over the random sets) the estimators divided by.
struct CorrelationResult : BinnedResult {
  std::optional<JackknifeResult> jackknife;
  double norm_dd = 0, norm_dr = 0, norm_rr = 0;
  double norm_rd = 0;         // a cross-correlation: R1D2's (norm_dr is D1R2's)
  std::size_t n_randoms = 0;  // points of the random catalogues, summed over the sets
  std::uint64_t randoms_hash = 0;  // content_hash of the random catalogues (cross: R1's, then R2's)
  bool analytic_rr = false;   // a periodic box without random catalogues (nothing to save)
};

// The counts of one correlation run, saved to a file and read back (issue 5), so that RR, the
// costliest count and the same for every data catalogue, is counted once and reused: DD, ΣDR_i,
// ΣRR_i (raw, and weighted when weighted), their normalisations, and with a jackknife the region
// counts T[r][k] and the normalisations without each region. The setting a count depends on
// (space, box, binning, weighting, regions) travels with it and is checked before reuse. The
// 2-D estimators (clustering2d.hpp) save the same counts over their flat 2-D bins. A
// cross-correlation's counts (`cross`) are D1D2 (dd), ΣD1R2 (dr), ΣR1D2 (rd) and ΣR1_iR2_j (rr),
// and a cross-correlation reuses only a cross-correlation's R1R2 (an auto-correlation's RR only an
// auto-correlation's).
// An estimate column's name: xi_<what> (xi alone for an empty `what`), or w_<what> on the sky
// (w(θ)): "xi_landy_szalay", "w_jk_sigma".
std::string estimate_name(CorrelationSpace space, const std::string& what);

struct SavedCounts {
  // 2: a cross-correlation's counts (an older twobody, which knows auto-correlations only, must not
  // read one as an RR); an auto-correlation's are still written as version 1. Both are read.
  static constexpr int kFormatVersion = 2;
  bool cross = false;
  CorrelationSpace space = CorrelationSpace::Open;
  std::optional<Box> box;  // Box space only
  bool weighted = false;
  Binning binning;      // 1-D bins (xi, wtheta)
  Binning2D binning2d;  // 2-D bins (xi-rppi, wp, xi-smu): active() instead of `binning`
  std::size_t n_data = 0, n_randoms = 0;  // points (randoms summed over the sets)
  std::size_t n_data2 = 0;                // cross: the second sample's points (n_data: the first's)
  // content_hash of the random catalogues they were counted on (0: saved by a twobody before
  // 0.1 kept it, never reused).
  std::uint64_t randoms_hash = 0;
  double norm_dd = 0, norm_dr = 0, norm_rr = 0, norm_rd = 0;
  std::vector<std::uint64_t> dd;
  std::vector<double> wdd, dr, rr, wdr, wrr;  // dr, rr summed over the random sets
  std::vector<double> rd, wrd;                // cross: ΣR1D2
  // With a jackknife: regions, layout, labels, n_data, n_randoms, the region counts (dd, dr, rr,
  // w*) and norm_dd, norm_dr, norm_rr; samples and summaries are not saved (they follow).
  std::optional<JackknifeResult> jackknife;
};
SavedCounts saved_counts(const CorrelationResult& r, CorrelationSpace space, const std::optional<Box>& box,
                         bool weighted);
// JSON (nlohmann), every double written so that it reads back to the same value. Errors: the
// file cannot be written or read, is not JSON, or not a counts file of this format version
// (Error(Input)).
void write_counts(const std::string& path, const SavedCounts& c);
SavedCounts read_counts(const std::string& path);

// Counts to take from a file instead of counting them again.
struct ReusedCounts {
  // ΣRR_i (and its weighted sums, normalisation, jackknife region counts and normalisations) from
  // these counts: the random catalogues are still needed for DR, their RR is not counted. Its
  // space, box, binning (1-D or 2-D, edges equal), weighting and jackknife regions must be the
  // run's (Error(Config)).
  const SavedCounts* rr = nullptr;
};

// ξ (box, open) or w(θ) (sky). Columns: npairs (DD) [wnpairs], dr, rr (raw counts summed over the
// random sets) [wdr, wrr], then xi_natural, xi_davis_peebles, xi_hamilton, xi_landy_szalay from the
// normalised (weighted, when weighted) counts. In a periodic box without random catalogues the RR
// is analytic, as Corrfunc's theory `xi` has it: rr (or wrr) = N(N−1)/2 · V_shell/V_box (weighted:
// (Σw)²(1 − 1/N)/2 · V_shell/V_box), and one column xi = DD/RR − 1 (with an analytic RR every
// estimator is that one); its jackknife leaves a region's data out of DD and of the analytic
// randoms alike (as the 2-D estimators do). Throws Error(Config) without random catalogues
// elsewhere.
// With a jackknife request, also the columns xi_jk_mean and xi_jk_sigma of the chosen estimator,
// and `jackknife` filled in; errors: fewer than 2 regions, a region without data (Error(Input)),
// labels missing or outside the data's.
CorrelationResult correlation(const PointSet& data, const std::vector<PointSet>& randoms, const Binning& bins,
                              CorrelationSpace space, const std::optional<Box>& box, bool weighted,
                              const RunOptions& opt = {}, const JackknifeRequest& jackknife = {},
                              const ReusedCounts& reuse = {});

// The estimators of a cross-correlation from normalised counts of one bin: natural D1D2/R1R2 − 1,
// Davis–Peebles D1D2/D1R2 − 1, Hamilton D1D2·R1R2/(D1R2·R1D2) − 1, Landy–Szalay
// (D1D2 − D1R2 − R1D2 + R1R2)/R1R2 (NaN where they divide by zero). With D1 = D2 and R1 = R2 they
// are estimate()'s.
Estimates estimate_cross(double dd, double dr, double rd, double rr);

// ξ (box, open) or w(θ) (sky) between two samples, each with its own random catalogues: D1D2,
// ΣD1R2_j, ΣR1_iD2 and ΣR1_iR2_j (every random catalogue of one sample with every one of the
// other: the same as one catalogue of each, joined), each a cross run of the engine, normalised by
// the products of the catalogues' sizes (Σw when weighted). Columns: npairs (D1D2) [wnpairs],
// d1r2, r1d2, r1r2 [wd1r2, wr1d2, wr1r2], xi_natural, xi_davis_peebles, xi_hamilton,
// xi_landy_szalay. In a periodic box without random catalogues (both lists empty): the analytic
// R1R2 = N1 N2 V_bin/V_box (weighted: Σw1 Σw2 V_bin/V_box) and one column xi = D1D2/R1R2 − 1.
// A jackknife labels every catalogue by one set of regions, fitted on the first sample (k-means on
// its unit vectors, cells of the box or of all catalogues' joint bounding box, or the catalogues'
// labels, which every catalogue must take from the first sample's); each count's region counts
// T[r][k] (pairs with a point in r) rebuild every leave-one-region-out estimate with the
// normalisations without r. `jackknife->n_data` counts both samples' points. Errors
// (Error(Config)): random catalogues for one sample only, none outside a box, --ravg; a region
// without a point of either sample (Error(Input)).
// With reuse.rr, R1R2 comes from a cross-correlation's saved counts of the same setting (the
// random catalogues are still needed for D1R2 and R1D2).
CorrelationResult cross_correlation(const PointSet& data1, const PointSet& data2, const std::vector<PointSet>& randoms1,
                                    const std::vector<PointSet>& randoms2, const Binning& bins, CorrelationSpace space,
                                    const std::optional<Box>& box, bool weighted, const RunOptions& opt = {},
                                    const JackknifeRequest& jackknife = {}, const ReusedCounts& reuse = {});

}  // namespace twobody
