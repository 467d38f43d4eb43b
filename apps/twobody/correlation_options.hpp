#pragma once
// The options the correlation functions share (xi, wtheta and the 2-D xi-rppi, wp, xi-smu): random
// catalogues, jackknife regions, saved counts, a second sample for cross-correlations, survey
// mocks; how they become the library's inputs, and the jackknife's part of the output.
#include <CLI/CLI.hpp>
#include <nlohmann/json.hpp>

#include <limits>
#include <optional>
#include <string>
#include <vector>

#include "common_options.hpp"
#include "twobody/correlation.hpp"

namespace twobody::cli {

struct JackknifeOptions {
  // Whether --jackknife was given is in the value: N < 2 is an error that says why.
  static constexpr int kNotGiven = std::numeric_limits<int>::min();
  int region_column = 0;
  int regions = kNotGiven;
  std::string estimator = "landy-szalay";
  std::string covariance;
  bool requested() const { return region_column > 0 || regions != kNotGiven; }
};

// Counts saved by one run (--save-counts) and reused by another (--rr).
struct CountsFiles {
  std::string save, rr;
};

// A correlation function's catalogues and what it does with them beyond the common options.
struct EstimatorOptions {
  std::vector<std::string> randoms;
  JackknifeOptions jk;
  CountsFiles counts;
  // Cross-correlations: a second sample and its random catalogues.
  std::string data2;
  std::vector<std::string> randoms2;
};

// Survey mocks (xi and the 2-D bins; Corrfunc's DDrppi_mocks, DDsmu_mocks): RA, Dec (degrees) and
// cz (km/s) or, with --comoving, a comoving distance (Mpc/h); for the 2-D bins the line of sight of
// each pair is its midpoint's.
struct MockOptions {
  bool mocks = false, comoving = false;
  double omega_m = -1, speed_of_light = 299792.458;
  int cosmology = 0;
};

// `estimator_help`: what --estimator chooses (the jackknife's estimator for xi and wtheta, whose
// table has every estimator; the one xi column of the 2-D statistics).
void add_jackknife_options(CLI::App& cmd, JackknifeOptions& jk, const char* estimator_help);
void add_counts_options(CLI::App& cmd, CountsFiles& f);
void add_cross_options(CLI::App& cmd, EstimatorOptions& e);
void add_mock_options(CLI::App& cmd, MockOptions& m);

JackknifeRequest jackknife_request(const JackknifeOptions& jk);
// The saved RR of --rr, read into `rr`, which must outlive the result.
ReusedCounts reused_counts(const CountsFiles& f, std::optional<SavedCounts>& rr);

// The random catalogues of --randoms, read with the data's columns and region column.
std::vector<PointSet> load_randoms(const CommonOptions& o, const EstimatorOptions& e, const char* columns_default);
// The estimator's files besides --data and --data2 (its random catalogues and second sample): what
// the warm-up weighs with them (BackendWarmUp).
std::vector<std::string> estimator_inputs(const EstimatorOptions& e);
// Mock catalogues to Cartesian (x, y, z) in Mpc/h about the observer; other catalogues unchanged.
void to_cartesian(PointSet& p, const MockOptions& m, const std::optional<Box>& box);
// The catalogues put into the engine's space: mocks to Cartesian, wrapped into the box with --wrap.
void place(PointSet& data, std::vector<PointSet>& randoms, const CommonOptions& o, const MockOptions& m,
           const std::optional<Box>& box);

// The second sample of a cross-correlation (--data2) and its random catalogues (--randoms2), read
// and placed as the first's.
struct SecondSample {
  PointSet data;
  std::vector<PointSet> randoms;
};
SecondSample second_sample(const CommonOptions& o, const MockOptions& m, const EstimatorOptions& e,
                           const char* columns_default, const std::optional<Box>& box);

// The covariance as a text matrix numpy.loadtxt reads: '#' lines say what it is (`header`, each
// line starting with '#'), then one row per entry, shortest round-trip decimals.
void write_covariance(const std::string& path, const std::string& header, const std::vector<double>& cov,
                      std::size_t n);
std::string edges_line(const char* name, const Binning& b);
// The table's `jackknife` block: the regions, and the leave-one-out samples of the vector the
// covariance is of (n values each) with that covariance.
nlohmann::json jackknife_meta(const JackknifeResult& j, const std::vector<double>& samples,
                              const std::vector<double>& covariance, std::size_t n);
void note_region_layout(const JackknifeResult& j, const JackknifeOptions& jk);

}  // namespace twobody::cli
