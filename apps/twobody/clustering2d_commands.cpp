// Anisotropic clustering about the z axis (Corrfunc's DDrppi, wp, DDsmu): the pair counts rppi and
// smu, and the correlation functions xi-rppi, wp and xi-smu. The r_p or s bins come from the
// common bin options, the pi or mu bins from their own.
#include <fmt/format.h>

#include "commands.hpp"
#include "correlation_options.hpp"
#include "mpi_session.hpp"
#include "twobody/clustering2d.hpp"
#include "twobody/error.hpp"
#include "twobody/io.hpp"

namespace twobody::cli {

namespace {

struct Clustering2DOptions {
  CommonOptions o;
  MockOptions m;
  EstimatorOptions e;  // the correlation functions' (xi-rppi, wp, xi-smu)
  double pimax = 0, mu_max = 1.0;
  std::size_t npibins = 0, nmu_bins = 0;
  bool multipoles = false;
};

// 2-D bins: the mean separation along the outer axis (Corrfunc's rpavg, savg).
void add_ravg_2d_option(CLI::App& cmd, CommonOptions& o, const char* column, const char* axis) {
  cmd.add_flag("--ravg", o.ravg,
               fmt::format("add the column {0}: the mean {1} of each bin's pairs (weighted by w_i w_j when weighted), and "
                           "per {1} bin over all its inner bins in the per-{1} table",
                           column, axis));
}

// The options of the (r_p, pi) bins and of the (s, mu) bins.
void add_rppi_options(CLI::App& cmd, Clustering2DOptions& s) {
  cmd.add_option("--pimax", s.pimax, "largest pi = |dz| (exclusive): pi bins [0,1), [1,2), ... up to pimax")
      ->required();
  cmd.add_option("--npibins", s.npibins, "number of pi bins (default: floor(pimax), Corrfunc's)");
  add_mock_options(cmd, s.m);
  add_ravg_2d_option(cmd, s.o, "rpavg", "r_p");
}

void add_smu_options(CLI::App& cmd, Clustering2DOptions& s) {
  cmd.add_option("--mu-max", s.mu_max, "largest mu = |dz|/s, in (0, 1] (default 1: the last bin includes mu = 1)");
  cmd.add_option("--nmu-bins", s.nmu_bins, "number of mu bins in [0, mu-max]")->required();
  add_mock_options(cmd, s.m);
  add_ravg_2d_option(cmd, s.o, "savg", "s");
}

void add_estimator_options(CLI::App& cmd, Clustering2DOptions& s) {
  cmd.add_option("--randoms", s.e.randoms,
                 "random catalogue (repeat for several); without one, a periodic box gives the analytic random counts");
  add_jackknife_options(cmd, s.e.jk,
                        "estimator with random catalogues (the xi column and the jackknife's; with the analytic RR "
                        "every estimator is DD/RR - 1)");
  add_counts_options(cmd, s.e.counts);
  add_cross_options(cmd, s.e);
}

LineOfSight line_of_sight(const Clustering2DOptions& s) {
  return s.m.mocks ? LineOfSight::PairMidpoint : LineOfSight::ZAxis;
}

Binning2D rppi_bins(const Clustering2DOptions& s) {
  return Binning2D::rp_pi(make_binning(s.o, "r_p"), s.pimax, s.npibins, line_of_sight(s));
}

Binning2D smu_bins(const Clustering2DOptions& s) {
  return Binning2D::s_mu(make_binning(s.o, "s"), s.mu_max, s.nmu_bins, line_of_sight(s));
}

// DD in 2-D bins (rppi, smu), auto or cross.
void count_pairs_2d(const Clustering2DOptions& s, const Context& c, Binning2D (*make_bins)(const Clustering2DOptions&)) {
  const CommonOptions& o = s.o;
  const BackendWarmUp warm(o);
  PointSets l = load_sets(o, c.features);
  const Binning2D bins = make_bins(s);
  auto box = make_box(o, l.a.dim());
  to_cartesian(l.a, s.m, box);
  if (l.cross) to_cartesian(l.b, s.m, box);
  if (box && o.wrap) {
    wrap_into_box(l.a, *box);
    if (l.cross) wrap_into_box(l.b, *box);
  }
  const bool weighted = o.weight_column > 0;
  const Binned2DResult r = paircount_2d(l.a, l.cross ? &l.b : nullptr, bins, box, weighted, make_run_options(o, c.bar));
  c.bar.finish();
  emit(binned2d_table(r), o);
}

// The 2-D estimators' table: per flat bin (xi-rppi, xi-smu) or per outer bin (wp, multipoles),
// the jackknife's samples and covariance of the vector that table shows.
void finish_correlation_2d(const Binned2DResult& x, bool per_outer, const Clustering2DOptions& s,
                           const std::optional<Box>& box, bool weighted, ProgressBar& bar) {
  const JackknifeOptions& jk = s.e.jk;
  bar.finish();
  if (!s.e.counts.save.empty() && cli_writes_output()) write_counts(s.e.counts.save, saved_counts(x, box, weighted));
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
  emit(t, s.o);
}

// xi in 2-D bins from random catalogues or analytic in a box; `per_outer`: the table per r_p or s
// bin (wp, the multipoles).
void correlate_2d(const Clustering2DOptions& s, Binning2D (*make_bins)(const Clustering2DOptions&), bool per_outer,
                  ProgressBar& bar) {
  const CommonOptions& o = s.o;
  const EstimatorOptions& e = s.e;
  const BackendWarmUp warm(o, estimator_inputs(e));
  if (e.randoms.empty() && !(e.counts.save.empty() && e.counts.rr.empty()))
    throw_config("--save-counts and --rr need random catalogues (--randoms): the analytic RR of a box is not counted");
  if (!e.jk.covariance.empty() && !e.jk.requested())
    throw_config("--covariance needs jackknife regions: --jackknife N or --regions-column K");
  PointSet a = load_points(o.data, o.columns, o.weight_column, "", e.jk.region_column);
  std::vector<PointSet> r = load_randoms(o, e, "");
  const Binning2D bins = make_bins(s);
  auto box = make_box(o, a.dim());
  place(a, r, o, s.m, box);
  const bool weighted = o.weight_column > 0;
  std::optional<SavedCounts> saved_rr;
  if (!e.data2.empty() || !e.randoms2.empty()) {
    if (e.data2.empty()) throw_config("--randoms2 goes with --data2 (a cross-correlation)");
    const SecondSample b = second_sample(o, s.m, e, "", box);
    const ReusedCounts reuse = reused_counts(e.counts, saved_rr);  // (R1R2: --rr of a cross run)
    const Binned2DResult x = cross_correlation_2d(a, b.data, r, b.randoms, bins, box, weighted,
                                                  parse_estimator(e.jk.estimator), make_run_options(o, bar),
                                                  jackknife_request(e.jk), reuse);
    finish_correlation_2d(x, per_outer, s, box, weighted, bar);
    return;
  }
  const ReusedCounts reuse = reused_counts(e.counts, saved_rr);
  const Binned2DResult x = correlation_2d(a, r, bins, box, weighted, parse_estimator(e.jk.estimator),
                                          make_run_options(o, bar), jackknife_request(e.jk), reuse);
  finish_correlation_2d(x, per_outer, s, box, weighted, bar);
}

const Command<Clustering2DOptions> rppi_command{
    .name = "rppi",
    .help = "DD(r_p, pi) pair counts about the z axis (Corrfunc's DDrppi), open or periodic",
    .features = {.variable = "r_p"},
    .add_options = add_rppi_options,
    .run = [](const Clustering2DOptions& s, const Context& c) { count_pairs_2d(s, c, rppi_bins); },
    .examples =
        "  twobody rppi --data builtin:clustered-box:20000 --box 1000 --rmin 1 --rmax 50 --nbins 8 --log --pimax 40\n",
};

const Command<Clustering2DOptions> smu_command{
    .name = "smu",
    .help = "DD(s, mu) pair counts about the z axis (Corrfunc's DDsmu), open or periodic",
    .features = {.variable = "s"},
    .add_options = add_smu_options,
    .run = [](const Clustering2DOptions& s, const Context& c) { count_pairs_2d(s, c, smu_bins); },
    .examples =
        "  twobody smu --data builtin:clustered-box:20000 --box 1000 --rmax 50 --nbins 10 --nmu-bins 10\n",
};

const Command<Clustering2DOptions> xi_rppi_command{
    .name = "xi-rppi",
    .help = "xi(r_p, pi) from random catalogues, or analytic in a periodic box",
    .features = {.second_set = false, .variable = "r_p"},
    .add_options =
        [](CLI::App& cmd, Clustering2DOptions& s) {
          add_rppi_options(cmd, s);
          add_estimator_options(cmd, s);
        },
    .run = [](const Clustering2DOptions& s, const Context& c) { correlate_2d(s, rppi_bins, false, c.bar); },
    .examples =
        "  twobody xi-rppi --data builtin:clustered-box:20000 --box 1000 --rmin 1 --rmax 50 --nbins 8 --log --pimax 40\n",
};

const Command<Clustering2DOptions> wp_command{
    .name = "wp",
    .help = "projected w_p(r_p) = 2 sum_pi xi(r_p, pi) dpi, from random catalogues or analytic in a box",
    .features = {.second_set = false, .variable = "r_p"},
    .add_options =
        [](CLI::App& cmd, Clustering2DOptions& s) {
          add_rppi_options(cmd, s);
          add_estimator_options(cmd, s);
        },
    .run = [](const Clustering2DOptions& s, const Context& c) { correlate_2d(s, rppi_bins, true, c.bar); },
    .examples =
        "  twobody wp --data builtin:clustered-box:20000 --box 1000 --rmin 1 --rmax 50 --nbins 8 --log --pimax 40\n"
        "  twobody wp --data builtin:clustered-box:20000 --randoms builtin:uniform-box:40000 --rmin 1 --rmax 50 --nbins 8 --log --pimax 40\n",
};

const Command<Clustering2DOptions> xi_smu_command{
    .name = "xi-smu",
    .help = "xi(s, mu) and (--multipoles) xi_0, xi_2, xi_4 from random catalogues or analytic in a box",
    .features = {.second_set = false, .variable = "s"},
    .add_options =
        [](CLI::App& cmd, Clustering2DOptions& s) {
          add_smu_options(cmd, s);
          add_estimator_options(cmd, s);
          cmd.add_flag("--multipoles", s.multipoles,
                       "one row per s bin: the multipoles xi0, xi2, xi4 (midpoint rule in mu)");
        },
    .run = [](const Clustering2DOptions& s, const Context& c) { correlate_2d(s, smu_bins, s.multipoles, c.bar); },
    .examples =
        "  twobody xi-smu --data builtin:clustered-box:20000 --box 1000 --rmax 50 --nbins 10 --nmu-bins 10 --multipoles\n",
};

}  // namespace

std::vector<Subcommand> clustering2d_commands() {
  return {rppi_command, smu_command, xi_rppi_command, wp_command, xi_smu_command};
}

}  // namespace twobody::cli
