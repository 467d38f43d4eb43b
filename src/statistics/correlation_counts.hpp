#pragma once
// The counts a correlation function estimates from (seed 003), shared by `correlation` (1-D bins)
// and `correlation_2d` (2-D bins): DD once, ΣDR_i and ΣRR_i over the random catalogues (or ΣRR_i
// from saved counts), their normalisations and, with a jackknife, the region counts T[r][k] of
// each and the normalisations without each region. The bins are whatever the Statistic declares:
// nothing here tells 1-D from 2-D bins, so both estimators share one counting and one jackknife.
#include <fmt/format.h>
#include <omp.h>

#include <array>
#include <chrono>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "twobody/correlation.hpp"
#include "twobody/jackknife.hpp"

namespace twobody::detail {

// The time a correlation function reports as its wall time (RunInfo::seconds): the whole call
// (unit vectors, region labels, joined random sets, every count, the estimators), not only the
// engine's pair counts, whose sum is kept in the plan text.
class StatisticClock {
 public:
  // The time so far is the data's preparation (coordinates, regions).
  void data_ready() { data_ = since_start(); }
  void stamp(Result& r, const struct CorrelationCounts* c = nullptr) const;

 private:
  double since_start() const { return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0_).count(); }
  std::chrono::steady_clock::time_point t0_ = std::chrono::steady_clock::now();
  double data_ = 0;
};

// Corrfunc's theory wp/xi: the random pairs of a periodic box, every random point carrying the
// mean weight, N(N−1)/2 or (Σw)²(1 − 1/N)/2; a bin expects them times V_bin/V_box.
inline double analytic_pairs(double n, double wsum, bool weighted) {
  return weighted ? 0.5 * wsum * wsum * (1 - 1 / n) : 0.5 * n * (n - 1);
}

// Per region: points, Σw and Σw² of one catalogue, for the normalisations without a region.
struct RegionSums {
  std::vector<double> n, w, w2;
  double total_n = 0, total_w = 0, total_w2 = 0;

  RegionSums(const PointSet& p, std::size_t regions);
  // Distinct pairs (auto) without region r, or ((Σw)² − Σw²)/2 weighted.
  double auto_norm(std::size_t r, bool weighted) const;
  // Points (or Σw) without region r.
  double size(std::size_t r, bool weighted) const { return weighted ? total_w - w[r] : total_n - n[r]; }
};

// How the catalogues get region labels 0..R-1: from their own labels, k-means on the sky, or
// equal cells of the box (or of the catalogues' joint bounding box in open space).
struct RegionLabeller {
  std::size_t regions = 0;
  std::string layout;
  std::optional<RegionNumbering> numbering;
  std::vector<std::array<double, 3>> centres;
  std::vector<std::array<double, kMaxDim>> space_centres;  // open space, fitted on the randoms
  std::optional<CellLayout> cells;
  bool fitted_on_data = false;  // k-means on the data: no random catalogues to fit on

  // The labels of one catalogue: its own (`given`, numbered) or from its engine coordinates
  // (`prepared`: cells, or the nearest centre, whose dot product only needs the direction).
  std::vector<std::int32_t> label(const PointSet& given, const PointSet& prepared, const std::string& which) const;
};
// Unit vectors from the observer at the origin to each point (survey mocks): the directions
// sky regions are fitted on. A point at the origin keeps (0, 0, 0).
PointSet directions(const PointSet& p);

// The random catalogues automatic regions are fitted on (as TreeCorr does: regions of equal area
// or volume of the footprint, whatever the data's clustering), as given, and how a sample of them
// becomes unit vectors on the sky (RA, Dec: sky_to_unit_vectors; mocks: directions).
struct RegionFit {
  std::vector<const PointSet*> randoms;
  std::function<PointSet(const PointSet&)> to_unit;
};
// An even-stride sample of the catalogues (joined in order), as many points as k-means is fitted on
// for `regions` regions (sky_region_centres' budget).
PointSet fitting_sample(const std::vector<const PointSet*>& sets, int regions);

// `space` picks the automatic layout. Sky: k-means fitted on a sample of `fit`'s random catalogues'
// unit vectors, or on `unit_data`, the data's, when there are none; the centres `reuse` was counted
// with when it has as many. Open space: Euclidean k-means on a sample of the random catalogues,
// or equal cells of all catalogues' joint bounding box without them. A periodic box: equal cells
// of the box (uniform randoms fill it: equal volumes already). `data` and `others` (the random
// catalogues, and any other sample) are the catalogues as given (labels, bounding box).
RegionLabeller make_labeller(const JackknifeRequest& jk, CorrelationSpace space, const std::optional<Box>& box,
                             const PointSet& data, const PointSet& unit_data, const std::vector<const PointSet*>& others,
                             const SavedCounts* reuse = nullptr, const RegionFit& fit = {});
// The catalogues as pointers (make_labeller reads them; no copies).
inline std::vector<const PointSet*> pointers(const std::vector<PointSet>& sets) {
  std::vector<const PointSet*> p;
  for (const PointSet& s : sets) p.push_back(&s);
  return p;
}

struct CorrelationCounts {
  bool weighted = false;
  Result dd;                             // the engine's DD: counts, weighted sums, region counts
  std::vector<double> dr, rr, wdr, wrr;  // summed over the random sets (zero without any)
  double norm_dd = 0, norm_dr = 0, norm_rr = 0;
  std::size_t n_randoms = 0;
  std::uint64_t randoms_hash = 0;  // content_hash of the random catalogues as given
  // With a jackknife: the data's sums per region, and the JackknifeResult's regions, layout,
  // labels, points per region, region counts and normalisations (no samples yet).
  std::optional<RegionSums> data_regions;
  std::optional<JackknifeResult> jackknife;
  // Wall seconds of the random catalogues' preparation, for the plan's time line: coordinates,
  // region labels, region sums and normalisations, the joined copies for ΣDR_i; and of the whole
  // counting phase, from DD's start to the last count's end (preparation overlapped in it).
  double t_prepare = 0, t_label = 0, t_sums = 0, t_join = 0, t_counts_wall = 0;
  bool overlapped = false;  // coordinates and labels of catalogue i + 1 made while i was counted
  int concurrent_counts = 1;  // runs in flight at once (GPU: kConcurrentCounts; a device each on several)
  int count_devices = 0;      // several devices: the counts shared out whole over this many
};

// Counts in flight at once on a GPU: two hide one run's host work and uploads behind the other's
// kernel; more would only queue on the same device.
constexpr int kConcurrentCounts = 2;

inline void StatisticClock::stamp(Result& r, const CorrelationCounts* c) const {
  const double engine = r.info.seconds;  // summed over the runs
  // Runs side by side: the counting phase's wall time, not the runs' sum.
  const bool side_by_side = c && c->concurrent_counts > 1;
  const double counts = side_by_side ? c->t_counts_wall : engine;
  r.info.seconds = since_start();
  r.info.plan += fmt::format(
      "\ntime: {:.4f} s in all: data coordinates and regions {:.4f} s, pair counts {:.4f} s{}, the rest ({}) {:.4f} s; "
      "{} OpenMP threads",
      r.info.seconds, data_, counts,
      side_by_side
          ? fmt::format(" ({} runs at a time {}, the random catalogues prepared beside them; {:.4f} s of engine time "
                        "summed over the runs)",
                        c->concurrent_counts,
                        c->count_devices > 1 ? fmt::format("over {} devices, whole counts shared out to the first device "
                                                           "with a free slot", c->count_devices)
                                             : std::string("on the GPU"),
                        engine)
          : "",
      side_by_side ? "estimators" : "random catalogues' coordinates, labels and joins, estimators",
      r.info.seconds - data_ - counts, omp_get_max_threads());
  if (c)
    r.info.plan += fmt::format(
        "\nrandom catalogues: coordinates {:.4f} s, labels {:.4f} s{}, region sums and norms {:.4f} s, joins {:.4f} s",
        c->t_prepare, c->t_label, c->overlapped ? " (on a host thread beside the counts, after the first)" : "",
        c->t_sums, c->t_join);
}

// `data` is in the engine's coordinates and, with `labeller`, labelled 0..R-1; each random
// catalogue is turned into the engine's coordinates by `prepare` and labelled by `labeller`. DD
// is counted with `s` as declared (its mean separations too), DR and RR without them. `space`
// and `s` (box, bins, weighting) are the setting a reused RR is checked against (Error(Config)).
// Errors: a region without data points (Error(Input)).
CorrelationCounts count_correlation(const Statistic& s, CorrelationSpace space, PointSet data,
                                    const std::vector<PointSet>& randoms,
                                    const std::function<PointSet(const PointSet&)>& prepare,
                                    const RegionLabeller* labeller, const RunOptions& opt, const ReusedCounts& reuse);

// A cross-correlation's four counts and estimates per (flat) bin (cross_correlation.cpp), for the
// 1-D and the 2-D bins alike: `stat` gives the metric, box, bins and weighting; `space` the
// coordinates (Sky: RA/Dec to unit vectors) and the automatic regions; `volume` per flat bin the
// analytic R1R2 of a box (both random lists empty). `xi` and the jackknife's samples are of
// `estimator` (analytic: D1D2/R1R2 − 1); the four estimators' columns when counted.
struct CrossEstimate {
  Result dd;                                     // D1D2
  std::vector<double> dr, rd, rr, wdr, wrd, wrr;  // D1R2, R1D2, R1R2 (rr: analytic when analytic)
  std::vector<double> xi, natural, davis_peebles, hamilton, landy_szalay;
  double norm_dd = 0, norm_dr = 0, norm_rr = 0, norm_rd = 0;
  std::size_t n_randoms = 0;
  std::uint64_t randoms_hash = 0;  // content_hash of R1's catalogues, then R2's
  bool analytic = false;
  bool reused_rr = false;  // R1R2 from saved counts
  std::optional<JackknifeResult> jackknife;

  // The counts' columns of the table (after npairs): rr or wrr when analytic, else d1r2, r1d2,
  // r1r2 [wd1r2, wr1d2, wr1r2].
  std::vector<NamedColumn> count_columns(bool weighted) const {
    if (analytic) return {{weighted ? "wrr" : "rr", rr}};
    std::vector<NamedColumn> c = {{"d1r2", dr}, {"r1d2", rd}, {"r1r2", rr}};
    if (weighted) c.insert(c.end(), {{"wd1r2", wdr}, {"wr1d2", wrd}, {"wr1r2", wrr}});
    return c;
  }
};
CrossEstimate cross_estimate(const Statistic& stat, CorrelationSpace space, const PointSet& data1, const PointSet& data2,
                             const std::vector<PointSet>& randoms1, const std::vector<PointSet>& randoms2,
                             const std::vector<double>& volume, const std::optional<Box>& box, const RunOptions& opt,
                             const JackknifeRequest& jk, Estimator estimator, const ReusedCounts& reuse = {});
// Saved counts hold only for the setting they were counted in (space, box, weighting, bins,
// jackknife regions, auto or cross, the random catalogues' size: `n_randoms` this run's points of
// them, summed): Error(Config) naming the first difference.
void check_reusable(const SavedCounts& c, const std::string& what, CorrelationSpace space, const Statistic& s,
                    const JackknifeResult* J, bool cross, std::size_t n_randoms, std::uint64_t randoms_hash);

// The normalised counts of bin k (weighted sums when weighted): of the whole sample, or without
// region r (each count minus the region's T[r][k], over the normalisations without the region).
struct NormalisedCounts {
  double dd, dr, rr;
};
NormalisedCounts normalised(const CorrelationCounts& c, std::size_t k);
NormalisedCounts normalised_without(const CorrelationCounts& c, std::size_t r, std::size_t k);

// The estimator of every leave-one-region-out sample, R x nbins at [r * nbins + k].
std::vector<double> jackknife_samples(const CorrelationCounts& c, Estimator e);

// ξ = DD/RR − 1 against the analytic RR of a periodic box (no random catalogues): `volume` per
// bin (shell, or 2-D bin) and the box's. With a jackknife, the sample without region r is
// DD − T_DD[r] against the analytic RR of the data left (N − n_r points of their mean weight,
// still uniform over the whole box: the choice that needs nothing but DD; its price, README:
// every sample is offset by about V_r/(V − V_r), alike for regions of equal volume and shape);
// J's norm_rr is set to those pairs and its DR/RR fields, which do not exist here, cleared.
struct AnalyticEstimate {
  double pairs = 0;                    // the box's random pairs
  std::vector<double> rr, xi, samples;  // samples: R x nbins, with a jackknife
};
AnalyticEstimate analytic_box_estimate(CorrelationCounts& c, const PointSet& data, const std::vector<double>& volume,
                                       double box_volume, bool weighted);

}  // namespace twobody::detail
