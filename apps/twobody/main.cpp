// The twobody command line: one subcommand per statistic, each a thin layer that reads points,
// builds the statistic's declaration through the library and writes its table.
#include <CLI/CLI.hpp>
#include <fmt/format.h>

#include <fstream>
#include <iostream>
#include <limits>
#include <new>

#include "common_options.hpp"
#include "scalar_commands.hpp"
#include "matrix_command.hpp"
#include "neighbour_commands.hpp"
#include "mpi_session.hpp"
#include "twobody/clustering2d.hpp"
#include "twobody/correlation.hpp"
#include "twobody/cosmology.hpp"
#include "twobody/error.hpp"
#include "twobody/generate.hpp"
#include "twobody/io.hpp"
#include "twobody/statistics.hpp"

using namespace twobody;
using namespace twobody::cli;

namespace {

struct Loaded {
  PointSet a, b;
  bool cross = false;
};

Loaded load_sets(const CommonOptions& o, const Features& f) {
  Loaded l;
  l.a = load_points(o.data, o.columns, o.weight_column, f.columns_default);
  if (!o.data2.empty()) {
    l.b = load_points(o.data2, o.columns2.empty() ? o.columns : o.columns2, o.weight_column, f.columns_default);
    l.cross = true;
  }
  return l;
}

void maybe_explain(const CommonOptions& o, Statistic s, const PointSet& a, const PointSet* b) {
  s.set_mean_separation(o.ravg);
  if (o.explain) std::cerr << explain(s, a, b, {o.backend, o.threads, {}, o.max_pairs, o.path, cli_distribution()}) << '\n';
}

void add_ravg_option(CLI::App& cmd, CommonOptions& o) {
  cmd.add_flag("--ravg", o.ravg,
               "add the columns ravg (mean separation of each bin's pairs, weighted by w_i w_j when weighted) "
               "and meanlogr (mean of its log)");
}

// 2-D bins: the mean separation along the outer axis (Corrfunc's rpavg, savg).
void add_ravg_2d_option(CLI::App& cmd, CommonOptions& o, const char* column, const char* axis) {
  cmd.add_flag("--ravg", o.ravg,
               fmt::format("add the column {0}: the mean {1} of each bin's pairs (weighted by w_i w_j when weighted), and "
                           "per {1} bin over all its inner bins in the per-{1} table",
                           column, axis));
}

void finish(BinnedResult r, const CommonOptions& o, ProgressBar& bar) {
  bar.finish();
  emit(binned_table(r), o);
}

struct JackknifeOptions {
  // One JackknifeOptions serves every command that takes these options: whether --jackknife was
  // given is in the value (an option pointer would be the last command's option).
  static constexpr int kNotGiven = std::numeric_limits<int>::min();
  int region_column = 0;
  int regions = kNotGiven;
  std::string estimator = "landy-szalay";
  std::string covariance;
  bool requested() const { return region_column > 0 || regions != kNotGiven; }
};

// `estimator_help`: what --estimator chooses (the jackknife's estimator for xi and wtheta, whose
// table has every estimator; the one xi column of the 2-D statistics).
void add_jackknife_options(CLI::App& cmd, JackknifeOptions& jk, const char* estimator_help) {
  auto* col = cmd.add_option("--regions-column", jk.region_column,
                             "1-based column of integer jackknife region labels (every catalogue)")
                  ->check(CLI::PositiveNumber);
  // No range check here: N < 2 is a request error (exit 4) that says why.
  cmd.add_option("--jackknife", jk.regions,
                 "jackknife errors over N regions assigned automatically (sky: k-means on the data; "
                 "box: equal cells)")
      ->excludes(col);
  cmd.add_option("--estimator", jk.estimator, estimator_help)
      ->check(CLI::IsMember({"natural", "davis-peebles", "hamilton", "landy-szalay"}));
  cmd.add_option("--covariance", jk.covariance, "write the jackknife covariance matrix (text) to FILE");
}

JackknifeRequest jackknife_request(const JackknifeOptions& jk) {
  JackknifeRequest r;
  r.use_labels = jk.region_column > 0;
  r.regions = jk.region_column > 0 || jk.regions == JackknifeOptions::kNotGiven ? 0 : jk.regions;
  if (jk.region_column == 0 && jk.regions != JackknifeOptions::kNotGiven && jk.regions < 2)
    throw_config(fmt::format("--jackknife {}: a jackknife needs at least 2 regions", jk.regions));
  r.estimator = parse_estimator(jk.estimator);
  return r;
}

// The covariance as a text matrix numpy.loadtxt reads: '#' lines say what it is (`header`, each
// line starting with '#'), then one row per entry, shortest round-trip decimals.
void write_covariance(const std::string& path, const std::string& header, const std::vector<double>& cov,
                      std::size_t n) {
  std::ofstream out(path);
  if (!out) throw_input(fmt::format("{}: cannot open for writing", path));
  out << header;
  for (std::size_t k = 0; k < n; ++k) {
    for (std::size_t l = 0; l < n; ++l) out << (l ? " " : "") << fmt::format("{}", cov[k * n + l]);
    out << '\n';
  }
  if (!out) throw_input(fmt::format("{}: write failed", path));
}

std::string edges_line(const char* name, const Binning& b) {
  std::string s = fmt::format("# {} edges:", name);
  for (double e : b.edges()) s += fmt::format(" {}", e);
  return s + '\n';
}

// The table's `jackknife` block: the regions, and the leave-one-out samples of the vector the
// covariance is of (n values each) with that covariance.
nlohmann::json jackknife_meta(const JackknifeResult& j, const std::vector<double>& samples,
                              const std::vector<double>& covariance, std::size_t n) {
  nlohmann::json cov = nlohmann::json::array(), rows = nlohmann::json::array();
  for (std::size_t k = 0; k < n; ++k)
    cov.push_back(std::vector<double>(covariance.begin() + k * n, covariance.begin() + (k + 1) * n));
  for (std::size_t q = 0; q < j.regions; ++q)
    rows.push_back(std::vector<double>(samples.begin() + q * n, samples.begin() + (q + 1) * n));
  nlohmann::json m = {{"estimator", to_string(j.estimator)},
                      {"regions", j.regions},
                      {"layout", j.layout},
                      {"n_data", j.n_data},
                      {"n_randoms", j.n_randoms},
                      {"samples", rows},
                      {"covariance", cov}};
  if (!j.labels.empty()) m["labels"] = j.labels;
  return m;
}

void note_region_layout(const JackknifeResult& j, const JackknifeOptions& jk) {
  if (static_cast<int>(j.regions) != jk.regions && jk.regions > 0)
    std::cerr << "twobody: note: jackknife regions: " << j.layout << '\n';
}

// Counts saved by one run (--save-counts) and reused by another (--rr).
struct CountsFiles {
  std::string save, rr;
};

void add_counts_options(CLI::App& cmd, CountsFiles& f) {
  cmd.add_option("--save-counts", f.save,
                 "write DD, DR, RR, their normalisations, the bins and any jackknife region counts to FILE (JSON)");
  cmd.add_option("--rr", f.rr,
                 "take RR (and its normalisation and region counts) from a --save-counts FILE of a run with the "
                 "same bins, space, box, weighting and regions instead of counting it (a cross-correlation: R1R2, "
                 "from a cross-correlation's file)");
}

ReusedCounts reused_counts(const CountsFiles& f, std::optional<SavedCounts>& rr) {
  ReusedCounts r;
  if (!f.rr.empty()) {
    rr = read_counts(f.rr);
    r.rr = &*rr;
  }
  return r;
}

void finish_correlation(const CorrelationResult& r, const CommonOptions& o, const JackknifeOptions& jk,
                        const CountsFiles& files, CorrelationSpace space, const std::optional<Box>& box,
                        bool weighted, ProgressBar& bar) {
  bar.finish();
  if (!files.save.empty() && cli_writes_output()) write_counts(files.save, saved_counts(r, space, box, weighted));
  if (!r.jackknife && (!jk.covariance.empty() || jk.estimator != "landy-szalay"))
    throw_config("--covariance and --estimator need jackknife regions: --jackknife N or --regions-column K");
  Table t = binned_table(r);
  if (r.jackknife) {
    const JackknifeResult& j = *r.jackknife;
    note_region_layout(j, jk);
    const std::size_t nb = r.binning.nbins();
    t.meta["jackknife"] = jackknife_meta(j, j.samples, j.covariance, nb);
    if (!jk.covariance.empty() && cli_writes_output())
      write_covariance(jk.covariance,
                       fmt::format("# jackknife covariance of xi ({} estimator), {} x {} bins, {} regions: {}\n",
                                   to_string(j.estimator), nb, nb, j.regions, j.layout) +
                           edges_line("bin", r.binning),
                       j.covariance, nb);
  }
  emit(t, o);
}

// The 2-D estimators' table: per flat bin (xi-rppi, xi-smu) or per outer bin (wp, multipoles),
// the jackknife's samples and covariance of the vector that table shows.
void finish_correlation_2d(const Binned2DResult& x, bool per_outer, const CommonOptions& o, const JackknifeOptions& jk,
                           const CountsFiles& files, const std::optional<Box>& box, bool weighted, ProgressBar& bar) {
  bar.finish();
  if (!files.save.empty() && cli_writes_output()) write_counts(files.save, saved_counts(x, box, weighted));
  Table t = per_outer ? per_outer_table(x) : binned2d_table(x);
  if (x.jackknife) {
    const JackknifeResult& j = *x.jackknife;
    note_region_layout(j, jk);
    const Binning2D& b = x.binning;
    const bool rppi = b.kind() == Binning2D::Kind::RpPi;
    const std::size_t n = per_outer ? x.per_outer_jackknife.mean.size() : b.nbins();
    const std::vector<double>& cov = per_outer ? x.per_outer_jackknife.covariance : j.covariance;
    const std::string what =
        per_outer ? (rppi ? "w_p at the r_p bins"
                          : fmt::format("(xi0, xi2, xi4) stacked: xi0 at the s bins (rows 0-{}), then xi2, then xi4",
                                        b.outer().nbins() - 1))
                  : fmt::format("{} per flat bin ({} at i * {} + k)", rppi ? "xi(r_p, pi)" : "xi(s, mu)",
                                rppi ? "r_p bin i, pi bin k" : "s bin i, mu bin k", b.inner().nbins());
    t.meta["jackknife"] = jackknife_meta(j, per_outer ? x.per_outer_samples : j.samples, cov, n);
    t.meta["jackknife"]["vector"] = what;
    if (!jk.covariance.empty() && cli_writes_output()) {
      std::string header =
          fmt::format("# jackknife covariance of {} ({}), {} x {}, {} regions: {}\n", what,
                      x.analytic_rr ? "analytic RR" : fmt::format("{} estimator", to_string(j.estimator)), n, n,
                      j.regions, j.layout) +
          fmt::format("# bins: {}\n", b.describe()) + edges_line(rppi ? "r_p" : "s", b.outer());
      if (!per_outer) header += edges_line(b.inner_name(), b.inner());
      write_covariance(jk.covariance, header, cov, n);
    }
  }
  emit(t, o);
}

void add_generate(CLI::App& app) {
  auto* g = app.add_subcommand("generate", "write a test catalogue (uniform, clustered or concentrated)");
  static std::string kind, output, cluster = "soneira-peebles";
  static std::size_t n = 100000;
  static int dim = 3;
  static double side = 1000.0;
  static std::uint64_t seed = 1;
  static bool sky = false;
  static ClusterOptions c;
  static double fraction = 0.9, volume = 0.01;
  g->add_option("kind", kind, "uniform | clustered | concentrated")
      ->required()
      ->check(CLI::IsMember({"uniform", "clustered", "concentrated"}));
  g->add_option("-n,--npoints", n, "number of points")->check(CLI::PositiveNumber);
  g->add_option("--dim", dim, "dimension (box catalogues)")->check(CLI::Range(1, kMaxDim));
  g->add_option("--box", side, "box side; points lie in [0, side)^dim")->check(CLI::PositiveNumber);
  g->add_flag("--sky", sky, "points on the sphere, written as RA Dec in degrees");
  g->add_option("--seed", seed, "random seed (same seed, same catalogue)");
  g->add_option("--cluster", cluster, "soneira-peebles | blobs")->check(CLI::IsMember({"soneira-peebles", "blobs"}));
  g->add_option("--blobs", c.blobs, "blobs: number of Gaussian blobs");
  g->add_option("--sigma", c.sigma, "blobs: width, fraction of the side (radians on the sky)");
  g->add_option("--eta", c.eta, "soneira-peebles: sub-clusters per level");
  g->add_option("--lambda", c.lambda, "soneira-peebles: radius ratio between levels");
  g->add_option("--levels", c.levels, "soneira-peebles: levels");
  g->add_option("--radius", c.radius, "soneira-peebles: top radius, fraction of the side (radians on the sky)");
  g->add_option("--fraction", fraction, "concentrated: fraction of the points in the cube")->check(CLI::Range(0.0, 1.0));
  g->add_option("--volume", volume, "concentrated: the cube's volume, fraction of the box");
  g->add_option("-o,--output", output, "output file (.npy for NumPy, otherwise text)")->required();
  g->callback([&] {
    c.kind = cluster == "blobs" ? ClusterOptions::Kind::GaussianBlobs : ClusterOptions::Kind::SoneiraPeebles;
    if (kind == "concentrated") {
      if (sky) throw_config("concentrated catalogues lie in a box, not on the sky");
      write_points(output, generate_concentrated_box(n, dim, side, fraction, volume, seed));
      return;
    }
    PointSet p = kind == "uniform" ? (sky ? generate_uniform_sky(n, seed) : generate_uniform_box(n, dim, side, seed))
                                   : (sky ? generate_clustered_sky(n, c, seed)
                                          : generate_clustered_box(n, dim, side, c, seed));
    write_points(output, p);
  });
}

}  // namespace

int main(int argc, char** argv) {
  const MpiSession mpi(argc, argv);
  CLI::App app{"twobody: exact 2-body statistics (pair counts, histograms, correlation functions) on CPU and GPU"};
  app.require_subcommand(1);
  app.set_version_flag("--version", std::string(kVersion));

  CommonOptions o;
  ProgressBar bar;

  auto* sdh_cmd = app.add_subcommand("sdh", "spatial distance histogram of one point set");
  const Features sdh_f{.second_set = false, .weights = false, .box = false};
  add_common_options(*sdh_cmd, o, sdh_f);
  add_ravg_option(*sdh_cmd, o);
  sdh_cmd->callback([&] {
    const BackendWarmUp warm(o.backend);
    PointSet a = load_points(o.data, o.columns, 0, "");
    // Without --rmax, SDH spans the whole data set: nbins from 0 to its bounding-box diagonal.
    const Binning bins = (!o.bins_file.empty() || o.rmax) ? make_binning(o, "r")
                         : sdh_default_binning(a, o.nbins ? o.nbins : 256);
    Statistic s{Traversal::Auto, Metric::Euclidean, {}, false, reduce::Histogram{bins}};
    maybe_explain(o, s, a, nullptr);
    finish(sdh(a, bins, make_run_options(o, bar)), o, bar);
  });

  auto* pc_cmd = app.add_subcommand("paircount", "DD(r) pair counts, auto or cross, open or periodic");
  const Features pc_f{};
  add_common_options(*pc_cmd, o, pc_f);
  add_ravg_option(*pc_cmd, o);
  pc_cmd->callback([&] {
    const BackendWarmUp warm(o.backend);
    Loaded l = load_sets(o, pc_f);
    const Binning bins = make_binning(o, "r");
    auto box = make_box(o, l.a.dim());
    if (box && o.wrap) {
      wrap_into_box(l.a, *box);
      if (l.cross) wrap_into_box(l.b, *box);
    }
    const bool weighted = o.weight_column > 0;
    Statistic s{l.cross ? Traversal::Cross : Traversal::Auto, box ? Metric::Periodic : Metric::Euclidean,
                box.value_or(Box{}), weighted, reduce::Histogram{bins}};
    maybe_explain(o, s, l.a, l.cross ? &l.b : nullptr);
    finish(paircount(l.a, l.cross ? &l.b : nullptr, bins, box, weighted, make_run_options(o, bar)), o, bar);
  });

  auto* rdf_cmd = app.add_subcommand("rdf", "radial distribution function g(r) in a periodic box");
  const Features rdf_f{.weights = false, .box_required = true};
  add_common_options(*rdf_cmd, o, rdf_f);
  add_ravg_option(*rdf_cmd, o);
  rdf_cmd->callback([&] {
    const BackendWarmUp warm(o.backend);
    Loaded l = load_sets(o, rdf_f);
    const Binning bins = make_binning(o, "r");
    const Box box = *make_box(o, l.a.dim());
    if (o.wrap) {
      wrap_into_box(l.a, box);
      if (l.cross) wrap_into_box(l.b, box);
    }
    Statistic s{l.cross ? Traversal::Cross : Traversal::Auto, Metric::Periodic, box, false, reduce::Histogram{bins}};
    maybe_explain(o, s, l.a, l.cross ? &l.b : nullptr);
    finish(rdf(l.a, l.cross ? &l.b : nullptr, bins, box, make_run_options(o, bar)), o, bar);
  });

  auto* ang_cmd = app.add_subcommand("angular", "DD(theta) pair counts on the sphere from RA, Dec (degrees)");
  const Features ang_f{.box = false, .columns_default = "1,2", .variable = "theta (degrees)"};
  add_common_options(*ang_cmd, o, ang_f);
  add_ravg_option(*ang_cmd, o);
  ang_cmd->callback([&] {
    const BackendWarmUp warm(o.backend);
    Loaded l = load_sets(o, ang_f);
    const Binning bins = make_binning(o, "theta (degrees)");
    const bool weighted = o.weight_column > 0;
    if (o.explain) {
      const PointSet ua = sky_to_unit_vectors(l.a);
      const PointSet ub = l.cross ? sky_to_unit_vectors(l.b) : PointSet();
      Statistic s{l.cross ? Traversal::Cross : Traversal::Auto, Metric::Angular, {}, weighted, reduce::Histogram{bins}};
      maybe_explain(o, s, ua, l.cross ? &ub : nullptr);
    }
    finish(angular(l.a, l.cross ? &l.b : nullptr, bins, weighted, make_run_options(o, bar)), o, bar);
  });

  // Correlation functions: a data catalogue and one or more random catalogues (same columns),
  // with jackknife errors when regions are given (--regions-column) or assigned (--jackknife).
  static std::vector<std::string> randoms;
  static JackknifeOptions jk;
  static CountsFiles counts_files;
  static std::optional<SavedCounts> saved_rr;
  // Cross-correlations (xi, wtheta): a second sample and its random catalogues.
  static std::string data2;
  static std::vector<std::string> randoms2;
  const auto add_cross_options = [](CLI::App& cmd) {
    cmd.add_option("--data2", data2,
                   "second sample: the cross-correlation of --data and --data2 (D1D2, D1R2, R1D2, R1R2), each with "
                   "its own random catalogues");
    cmd.add_option("--randoms2", randoms2, "random catalogue of the second sample (repeat for several)");
  };
  const auto load_catalogues = [&](const Features& f) {
    std::vector<PointSet> r;
    for (const auto& path : randoms)
      r.push_back(load_points(path, o.columns, o.weight_column, f.columns_default, jk.region_column));
    return r;
  };
  // Survey mocks (xi; Corrfunc's DDrppi_mocks, DDsmu_mocks): RA, Dec (degrees) and cz (km/s) or,
  // with --comoving, a comoving distance (Mpc/h); for the 2-D bins the line of sight of each pair is
  // its midpoint's.
  static bool mocks = false, comoving = false;
  static double omega_m = -1, speed_of_light = 299792.458;
  static int cosmology = 0;
  const auto add_mock_options = [](CLI::App& cmd) {
    cmd.add_flag("--mocks", mocks,
                 "survey mocks: the columns are RA, Dec (degrees), cz (km/s), the line of sight each pair's midpoint "
                 "(Corrfunc's *_mocks); open space only");
    cmd.add_option("--omega-m", omega_m, "with --mocks: Omega_m of the flat LCDM cosmology turning cz into comoving distance");
    cmd.add_option("--cosmology", cosmology, "with --mocks: Corrfunc's presets, 1 LasDamas (Omega_m 0.25), 2 Planck (0.302)")
        ->check(CLI::IsMember({1, 2}));
    cmd.add_option("--speed-of-light", speed_of_light, "with --mocks: c in km/s for z = cz/c (default 299792.458; Corrfunc 299800)");
    cmd.add_flag("--comoving", comoving, "with --mocks: the third column is already the comoving distance in Mpc/h");
  };
  // Mock catalogues to Cartesian (x, y, z) in Mpc/h about the observer.
  const auto to_cartesian = [&](PointSet& p, const std::optional<Box>& box) {
    if (!mocks) {
      if (comoving || omega_m >= 0 || cosmology != 0 || speed_of_light != 299792.458)
        throw_config("--omega-m, --cosmology, --speed-of-light and --comoving go with --mocks");
      return;
    }
    if (box) throw_config("--mocks takes open space: a periodic box has no observer (drop --box)");
    FlatLcdm c;
    if (!comoving) {
      if ((omega_m >= 0) == (cosmology != 0))
        throw_config("--mocks turns cz into comoving distance: give one of --omega-m and --cosmology (or --comoving)");
      c = cosmology != 0 ? FlatLcdm::corrfunc(cosmology) : FlatLcdm{omega_m};
      c.speed_of_light = speed_of_light;
    }
    p = sky_to_cartesian(p, c, comoving);
  };
  // The second sample of a cross-correlation (--data2) and its random catalogues (--randoms2), read
  // and placed as the first's: mocks to comoving Cartesian, wrapped into the box with --wrap.
  struct SecondSample {
    PointSet data;
    std::vector<PointSet> randoms;
  };
  const auto second_sample = [&](const char* columns_default, const std::optional<Box>& box) {
    SecondSample s{load_points(data2, o.columns, o.weight_column, columns_default, jk.region_column), {}};
    for (const auto& path : randoms2)
      s.randoms.push_back(load_points(path, o.columns, o.weight_column, columns_default, jk.region_column));
    to_cartesian(s.data, box);
    for (auto& p : s.randoms) to_cartesian(p, box);
    if (box && o.wrap) {
      wrap_into_box(s.data, *box);
      for (auto& p : s.randoms) wrap_into_box(p, *box);
    }
    return s;
  };
  auto* xi_cmd = app.add_subcommand(
      "xi", "xi(r) from data and random catalogues (DD, DR, RR and four estimators), or analytic in a periodic box");
  const Features xi_f{.second_set = false};
  add_common_options(*xi_cmd, o, xi_f);
  add_ravg_option(*xi_cmd, o);
  xi_cmd->add_option("--randoms", randoms,
                     "random catalogue (repeat for several); without one, a periodic box (--box) gives the analytic "
                     "random counts");
  add_jackknife_options(*xi_cmd, jk, "estimator of the jackknife columns and covariance");
  add_counts_options(*xi_cmd, counts_files);
  add_mock_options(*xi_cmd);
  add_cross_options(*xi_cmd);
  xi_cmd->callback([&] {
    const BackendWarmUp warm(o.backend);
    if (randoms.empty() && !(counts_files.save.empty() && counts_files.rr.empty()))
      throw_config(
          "--save-counts and --rr need random catalogues (--randoms): the analytic RR of a box is not counted");
    PointSet a = load_points(o.data, o.columns, o.weight_column, "", jk.region_column);
    std::vector<PointSet> r = load_catalogues(xi_f);
    const Binning bins = make_binning(o, "r");
    auto box = make_box(o, a.dim());
    to_cartesian(a, box);
    for (auto& p : r) to_cartesian(p, box);
    if (box && o.wrap) {
      wrap_into_box(a, *box);
      for (auto& p : r) wrap_into_box(p, *box);
    }
    const CorrelationSpace space = box ? CorrelationSpace::Box : CorrelationSpace::Open;
    const bool weighted = o.weight_column > 0;
    JackknifeRequest request = jackknife_request(jk);
    request.sky_about_origin = mocks;  // automatic regions: patches of sky about the observer
    if (!data2.empty() || !randoms2.empty()) {
      if (data2.empty()) throw_config("--randoms2 goes with --data2 (a cross-correlation)");
      const SecondSample b = second_sample("", box);
      const ReusedCounts reuse = reused_counts(counts_files, saved_rr);  // (R1R2: --rr of a cross run)
      finish_correlation(
          cross_correlation(a, b.data, r, b.randoms, bins, space, box, weighted, make_run_options(o, bar), request, reuse), o,
          jk, counts_files, space, box, weighted, bar);
      return;
    }
    const ReusedCounts reuse = reused_counts(counts_files, saved_rr);
    finish_correlation(correlation(a, r, bins, space, box, weighted, make_run_options(o, bar), request, reuse),
                       o, jk, counts_files, space, box, weighted, bar);
  });
  auto* w_cmd = app.add_subcommand("wtheta", "w(theta) on the sky from data and random catalogues (RA, Dec in degrees)");
  const Features w_f{.second_set = false, .box = false, .columns_default = "1,2", .variable = "theta (degrees)"};
  add_common_options(*w_cmd, o, w_f);
  add_ravg_option(*w_cmd, o);
  w_cmd->add_option("--randoms", randoms, "random catalogue (repeat the option for several)")->required();
  add_jackknife_options(*w_cmd, jk, "estimator of the jackknife columns and covariance");
  add_counts_options(*w_cmd, counts_files);
  add_cross_options(*w_cmd);
  w_cmd->callback([&] {
    const BackendWarmUp warm(o.backend);
    const PointSet a = load_points(o.data, o.columns, o.weight_column, w_f.columns_default, jk.region_column);
    const std::vector<PointSet> r = load_catalogues(w_f);
    const bool weighted = o.weight_column > 0;
    if (!data2.empty() || !randoms2.empty()) {
      if (data2.empty() || randoms2.empty())
        throw_config("a cross w(theta) takes --data2 with its random catalogues (--randoms2)");
      const SecondSample b = second_sample(w_f.columns_default, std::nullopt);
      const ReusedCounts reuse = reused_counts(counts_files, saved_rr);  // (R1R2: --rr of a cross run)
      finish_correlation(cross_correlation(a, b.data, r, b.randoms, make_binning(o, "theta (degrees)"), CorrelationSpace::Sky,
                                           std::nullopt, weighted, make_run_options(o, bar), jackknife_request(jk), reuse),
                         o, jk, counts_files, CorrelationSpace::Sky, std::nullopt, weighted, bar);
      return;
    }
    const ReusedCounts reuse = reused_counts(counts_files, saved_rr);
    finish_correlation(correlation(a, r, make_binning(o, "theta (degrees)"), CorrelationSpace::Sky, std::nullopt,
                                   weighted, make_run_options(o, bar), jackknife_request(jk), reuse),
                       o, jk, counts_files, CorrelationSpace::Sky, std::nullopt, weighted, bar);
  });

  // Anisotropic clustering about the z axis (Corrfunc's DDrppi, wp, DDsmu): r_p or s bins from the
  // common bin options, pi or mu bins from their own.
  static double pimax = 0, mu_max = 1.0;
  static std::size_t npibins = 0, nmu_bins = 0;
  static bool want_multipoles = false;
  const auto add_pi_options = [](CLI::App& cmd) {
    cmd.add_option("--pimax", pimax, "largest pi = |dz| (exclusive): pi bins [0,1), [1,2), ... up to pimax")->required();
    cmd.add_option("--npibins", npibins, "number of pi bins (default: floor(pimax), Corrfunc's)");
  };
  const auto add_mu_options = [](CLI::App& cmd) {
    cmd.add_option("--mu-max", mu_max, "largest mu = |dz|/s, in (0, 1] (default 1: the last bin includes mu = 1)");
    cmd.add_option("--nmu-bins", nmu_bins, "number of mu bins in [0, mu-max]")->required();
  };
  const auto los = [] { return mocks ? LineOfSight::PairMidpoint : LineOfSight::ZAxis; };
  const auto rppi_bins = [&] { return Binning2D::rp_pi(make_binning(o, "r_p"), pimax, npibins, los()); };
  const auto smu_bins = [&] { return Binning2D::s_mu(make_binning(o, "s"), mu_max, nmu_bins, los()); };
  const auto explain_2d = [&](const Binning2D& bins, const PointSet& a, const PointSet* b, const std::optional<Box>& box,
                              bool weighted) {
    if (!o.explain) return;
    Statistic s;
    s.traversal = b ? Traversal::Cross : Traversal::Auto;
    s.metric = box ? Metric::Periodic : Metric::Euclidean;
    if (box) s.box = *box;
    s.weighted = weighted;
    s.reduction = reduce::Histogram2D{bins};
    maybe_explain(o, s, a, b);
  };
  const auto counts_2d = [&](const Features& f, auto make_bins) {
    const BackendWarmUp warm(o.backend);
    Loaded l = load_sets(o, f);
    const Binning2D bins = make_bins();
    auto box = make_box(o, l.a.dim());
    to_cartesian(l.a, box);
    if (l.cross) to_cartesian(l.b, box);
    if (box && o.wrap) {
      wrap_into_box(l.a, *box);
      if (l.cross) wrap_into_box(l.b, *box);
    }
    const bool weighted = o.weight_column > 0;
    explain_2d(bins, l.a, l.cross ? &l.b : nullptr, box, weighted);
    const Binned2DResult r = paircount_2d(l.a, l.cross ? &l.b : nullptr, bins, box, weighted, make_run_options(o, bar));
    bar.finish();
    emit(binned2d_table(r), o);
  };
  const auto correlation_2d_cmd = [&](auto make_bins, bool per_outer) {
    const BackendWarmUp warm(o.backend);
    if (randoms.empty() && !(counts_files.save.empty() && counts_files.rr.empty()))
      throw_config(
          "--save-counts and --rr need random catalogues (--randoms): the analytic RR of a box is not counted");
    if (!jk.covariance.empty() && !jk.requested())
      throw_config("--covariance needs jackknife regions: --jackknife N or --regions-column K");
    PointSet a = load_points(o.data, o.columns, o.weight_column, "", jk.region_column);
    std::vector<PointSet> r;
    for (const auto& path : randoms) r.push_back(load_points(path, o.columns, o.weight_column, "", jk.region_column));
    const Binning2D bins = make_bins();
    auto box = make_box(o, a.dim());
    to_cartesian(a, box);
    for (auto& p : r) to_cartesian(p, box);
    if (box && o.wrap) {
      wrap_into_box(a, *box);
      for (auto& p : r) wrap_into_box(p, *box);
    }
    const bool weighted = o.weight_column > 0;
    explain_2d(bins, a, nullptr, box, weighted);
    if (!data2.empty() || !randoms2.empty()) {
      if (data2.empty()) throw_config("--randoms2 goes with --data2 (a cross-correlation)");
      const SecondSample b = second_sample("", box);
      const ReusedCounts reuse = reused_counts(counts_files, saved_rr);  // (R1R2: --rr of a cross run)
      const Binned2DResult x = cross_correlation_2d(a, b.data, r, b.randoms, bins, box, weighted, parse_estimator(jk.estimator),
                                                    make_run_options(o, bar), jackknife_request(jk), reuse);
      finish_correlation_2d(x, per_outer, o, jk, counts_files, box, weighted, bar);
      return;
    }
    const ReusedCounts reuse = reused_counts(counts_files, saved_rr);
    const Binned2DResult x = correlation_2d(a, r, bins, box, weighted, parse_estimator(jk.estimator),
                                            make_run_options(o, bar), jackknife_request(jk), reuse);
    finish_correlation_2d(x, per_outer, o, jk, counts_files, box, weighted, bar);
  };
  const auto add_correlation_2d_options = [&](CLI::App& cmd) {
    cmd.add_option("--randoms", randoms,
                   "random catalogue (repeat for several); without one, a periodic box gives the analytic random counts");
    add_jackknife_options(cmd, jk,
                          "estimator with random catalogues (the xi column and the jackknife's; with the analytic RR "
                          "every estimator is DD/RR - 1)");
    add_counts_options(cmd, counts_files);
    add_cross_options(cmd);
  };

  auto* rppi_cmd = app.add_subcommand("rppi", "DD(r_p, pi) pair counts about the z axis (Corrfunc's DDrppi), open or periodic");
  const Features rppi_f{.variable = "r_p"};
  add_common_options(*rppi_cmd, o, rppi_f);
  add_pi_options(*rppi_cmd);
  add_mock_options(*rppi_cmd);
  add_ravg_2d_option(*rppi_cmd, o, "rpavg", "r_p");
  rppi_cmd->callback([&] { counts_2d(rppi_f, rppi_bins); });

  auto* smu_cmd = app.add_subcommand("smu", "DD(s, mu) pair counts about the z axis (Corrfunc's DDsmu), open or periodic");
  const Features smu_f{.variable = "s"};
  add_common_options(*smu_cmd, o, smu_f);
  add_mu_options(*smu_cmd);
  add_mock_options(*smu_cmd);
  add_ravg_2d_option(*smu_cmd, o, "savg", "s");
  smu_cmd->callback([&] { counts_2d(smu_f, smu_bins); });

  auto* xirppi_cmd = app.add_subcommand("xi-rppi", "xi(r_p, pi) from random catalogues, or analytic in a periodic box");
  const Features xi2_f{.second_set = false, .variable = "r_p"};
  add_common_options(*xirppi_cmd, o, xi2_f);
  add_pi_options(*xirppi_cmd);
  add_mock_options(*xirppi_cmd);
  add_ravg_2d_option(*xirppi_cmd, o, "rpavg", "r_p");
  add_correlation_2d_options(*xirppi_cmd);
  xirppi_cmd->callback([&] { correlation_2d_cmd(rppi_bins, false); });

  auto* wp_cmd = app.add_subcommand("wp", "projected w_p(r_p) = 2 sum_pi xi(r_p, pi) dpi, from random catalogues or analytic in a box");
  add_common_options(*wp_cmd, o, xi2_f);
  add_pi_options(*wp_cmd);
  add_mock_options(*wp_cmd);
  add_ravg_2d_option(*wp_cmd, o, "rpavg", "r_p");
  add_correlation_2d_options(*wp_cmd);
  wp_cmd->callback([&] { correlation_2d_cmd(rppi_bins, true); });

  auto* xismu_cmd = app.add_subcommand("xi-smu", "xi(s, mu) and (--multipoles) xi_0, xi_2, xi_4 from random catalogues or analytic in a box");
  const Features xis_f{.second_set = false, .variable = "s"};
  add_common_options(*xismu_cmd, o, xis_f);
  add_mu_options(*xismu_cmd);
  add_mock_options(*xismu_cmd);
  add_ravg_2d_option(*xismu_cmd, o, "savg", "s");
  add_correlation_2d_options(*xismu_cmd);
  xismu_cmd->add_flag("--multipoles", want_multipoles, "one row per s bin: the multipoles xi0, xi2, xi4 (midpoint rule in mu)");
  xismu_cmd->callback([&] { correlation_2d_cmd(smu_bins, want_multipoles); });

  add_scalar_commands(app, o, bar);
  add_neighbour_commands(app, o, bar);
  add_matrix_command(app, o, bar);
  add_generate(app);

  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    const int code = app.exit(e);
    return code == 0 ? 0 : 2;
  } catch (const Error& e) {
    bar.finish();
    std::cerr << "twobody: error: " << e.what() << '\n';
    return e.exit_code();
  } catch (const std::bad_alloc&) {
    bar.finish();
    std::cerr << "twobody: error: out of memory (the input or the requested output is too large for this machine)\n";
    return static_cast<int>(ErrorKind::Resource);
  } catch (const std::exception& e) {
    bar.finish();
    std::cerr << "twobody: internal error: " << e.what() << '\n';
    return 1;
  }
  return 0;
}
