// The correlation functions xi(r) and w(theta): a data catalogue and one or more random catalogues
// (same columns), with jackknife errors when regions are given (--regions-column) or assigned
// (--jackknife), and cross-correlations of two samples.
#include <fmt/format.h>

#include "commands.hpp"
#include "correlation_options.hpp"
#include "mpi_session.hpp"
#include "twobody/correlation.hpp"
#include "twobody/error.hpp"
#include "twobody/io.hpp"

namespace twobody::cli {

namespace {

struct CorrelationOptions {
  CommonOptions o;
  EstimatorOptions e;
  MockOptions m;
};

void finish_correlation(const CorrelationResult& r, const CorrelationOptions& s, CorrelationSpace space,
                        const std::optional<Box>& box, bool weighted, ProgressBar& bar) {
  const JackknifeOptions& jk = s.e.jk;
  bar.finish();
  if (!s.e.counts.save.empty() && cli_writes_output())
    write_counts(s.e.counts.save, saved_counts(r, space, box, weighted));
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
  emit(t, s.o);
}

const Command<CorrelationOptions> xi_command{
    .name = "xi",
    .help = "xi(r) from data and random catalogues (DD, DR, RR and four estimators), or analytic in a periodic box",
    .features = {.second_set = false},
    .add_options =
        [](CLI::App& cmd, CorrelationOptions& s) {
          add_ravg_option(cmd, s.o);
          cmd.add_option("--randoms", s.e.randoms,
                         "random catalogue (repeat for several); without one, a periodic box (--box) gives the "
                         "analytic random counts");
          add_jackknife_options(cmd, s.e.jk, "estimator of the jackknife columns and covariance");
          add_counts_options(cmd, s.e.counts);
          add_mock_options(cmd, s.m);
          add_cross_options(cmd, s.e);
        },
    .run =
        [](const CorrelationOptions& s, const Context& c) {
          const CommonOptions& o = s.o;
          const EstimatorOptions& e = s.e;
          const BackendWarmUp warm(o, estimator_inputs(e));
          if (e.randoms.empty() && !(e.counts.save.empty() && e.counts.rr.empty()))
            throw_config(
                "--save-counts and --rr need random catalogues (--randoms): the analytic RR of a box is not counted");
          PointSet a = load_points(o.data, o.columns, o.weight_column, "", e.jk.region_column);
          std::vector<PointSet> r = load_randoms(o, e, c.features.columns_default);
          const Binning bins = make_binning(o, "r");
          auto box = make_box(o, a.dim());
          place(a, r, o, s.m, box);
          const CorrelationSpace space = box ? CorrelationSpace::Box : CorrelationSpace::Open;
          const bool weighted = o.weight_column > 0;
          JackknifeRequest request = jackknife_request(e.jk);
          request.sky_about_origin = s.m.mocks;  // automatic regions: patches of sky about the observer
          std::optional<SavedCounts> saved_rr;
          if (!e.data2.empty() || !e.randoms2.empty()) {
            if (e.data2.empty()) throw_config("--randoms2 goes with --data2 (a cross-correlation)");
            const SecondSample b = second_sample(o, s.m, e, "", box);
            const ReusedCounts reuse = reused_counts(e.counts, saved_rr);  // (R1R2: --rr of a cross run)
            finish_correlation(cross_correlation(a, b.data, r, b.randoms, bins, space, box, weighted,
                                                 make_run_options(o, c.bar), request, reuse),
                               s, space, box, weighted, c.bar);
            return;
          }
          const ReusedCounts reuse = reused_counts(e.counts, saved_rr);
          finish_correlation(correlation(a, r, bins, space, box, weighted, make_run_options(o, c.bar), request, reuse),
                             s, space, box, weighted, c.bar);
        },
    .examples =
        "  twobody xi --data builtin:clustered-box:20000 --box 1000 --rmin 1 --rmax 100 --nbins 10 --log\n"
        "  twobody xi --data builtin:clustered-box:20000 --randoms builtin:uniform-box:40000 --rmin 1 --rmax 100 --nbins 10 --log --jackknife 8\n",
};

const Command<CorrelationOptions> wtheta_command{
    .name = "wtheta",
    .help = "w(theta) on the sky from data and random catalogues (RA, Dec in degrees)",
    .features = {.second_set = false, .box = false, .columns_default = "1,2", .variable = "theta (degrees)"},
    .add_options =
        [](CLI::App& cmd, CorrelationOptions& s) {
          add_ravg_option(cmd, s.o);
          cmd.add_option("--randoms", s.e.randoms, "random catalogue (repeat the option for several)")->required();
          add_jackknife_options(cmd, s.e.jk, "estimator of the jackknife columns and covariance");
          add_counts_options(cmd, s.e.counts);
          add_cross_options(cmd, s.e);
        },
    .run =
        [](const CorrelationOptions& s, const Context& c) {
          const CommonOptions& o = s.o;
          const EstimatorOptions& e = s.e;
          const char* columns = c.features.columns_default;
          const BackendWarmUp warm(o, estimator_inputs(e));
          const PointSet a = load_points(o.data, o.columns, o.weight_column, columns, e.jk.region_column);
          const std::vector<PointSet> r = load_randoms(o, e, columns);
          const bool weighted = o.weight_column > 0;
          std::optional<SavedCounts> saved_rr;
          if (!e.data2.empty() || !e.randoms2.empty()) {
            if (e.data2.empty() || e.randoms2.empty())
              throw_config("a cross w(theta) takes --data2 with its random catalogues (--randoms2)");
            const SecondSample b = second_sample(o, s.m, e, columns, std::nullopt);
            const ReusedCounts reuse = reused_counts(e.counts, saved_rr);  // (R1R2: --rr of a cross run)
            finish_correlation(cross_correlation(a, b.data, r, b.randoms, make_binning(o, "theta (degrees)"),
                                                 CorrelationSpace::Sky, std::nullopt, weighted,
                                                 make_run_options(o, c.bar), jackknife_request(e.jk), reuse),
                               s, CorrelationSpace::Sky, std::nullopt, weighted, c.bar);
            return;
          }
          const ReusedCounts reuse = reused_counts(e.counts, saved_rr);
          finish_correlation(correlation(a, r, make_binning(o, "theta (degrees)"), CorrelationSpace::Sky, std::nullopt,
                                         weighted, make_run_options(o, c.bar), jackknife_request(e.jk), reuse),
                             s, CorrelationSpace::Sky, std::nullopt, weighted, c.bar);
        },
    .examples =
        "  twobody wtheta --data builtin:clustered-sky:20000 --randoms builtin:uniform-sky:40000 --rmin 0.01 --rmax 10 --nbins 10 --log\n"
        "  twobody wtheta --data builtin:clustered-sky:50000 --randoms builtin:uniform-sky:40000 --rmin 0.1 --rmax 10 --nbins 8 --log --jackknife 8 --covariance cov.txt\n",
};

}  // namespace

std::vector<Subcommand> correlation_commands() { return {xi_command, wtheta_command}; }

}  // namespace twobody::cli
