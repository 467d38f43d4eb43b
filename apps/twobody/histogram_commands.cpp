// The 1-D pair-count histograms: sdh, paircount, rdf and angular.
#include "commands.hpp"
#include "twobody/error.hpp"
#include "twobody/statistics.hpp"

namespace twobody::cli {

namespace {

struct HistogramOptions {
  CommonOptions o;
};

void add_options(CLI::App& cmd, HistogramOptions& s) { add_ravg_option(cmd, s.o); }

void finish(BinnedResult r, const CommonOptions& o, ProgressBar& bar) {
  bar.finish();
  emit(binned_table(r), o);
}

const Command<HistogramOptions> sdh_command{
    .name = "sdh",
    .help = "spatial distance histogram of one point set",
    .features = {.second_set = false, .weights = false, .box = false},
    .add_options = add_options,
    .run =
        [](const HistogramOptions& s, const Context& c) {
          const CommonOptions& o = s.o;
          const BackendWarmUp warm(o);
          PointSet a = load_points(o.data, o.columns, 0, "");
          // Without --rmax, SDH spans the whole data set: nbins from 0 to its bounding-box diagonal.
          const Binning bins = (!o.bins_file.empty() || o.rmax) ? make_binning(o, "r")
                                                                  : sdh_default_binning(a, o.nbins ? o.nbins : 256);
          finish(sdh(a, bins, make_run_options(o, c.bar)), o, c.bar);
        },
    .examples =
        "  twobody sdh --data builtin:clustered-box:20000 --nbins 64\n"
        "  twobody sdh --data builtin:uniform-box:20000 --rmax 200 --nbins 20 --format table\n",
};

const Command<HistogramOptions> paircount_command{
    .name = "paircount",
    .help = "DD(r) pair counts, auto or cross, open or periodic",
    .features = {},
    .add_options = add_options,
    .run =
        [](const HistogramOptions& s, const Context& c) {
          const CommonOptions& o = s.o;
          const BackendWarmUp warm(o);
          PointSets l = load_sets(o, c.features);
          const Binning bins = make_binning(o, "r");
          auto box = make_box(o, l.a.dim());
          if (box && o.wrap) {
            wrap_into_box(l.a, *box);
            if (l.cross) wrap_into_box(l.b, *box);
          }
          const bool weighted = o.weight_column > 0;
          finish(paircount(l.a, l.cross ? &l.b : nullptr, bins, box, weighted, make_run_options(o, c.bar)), o, c.bar);
        },
    .examples =
        "  twobody paircount --data builtin:clustered-box:20000 --rmin 1 --rmax 100 --nbins 10 --log\n"
        "  twobody paircount --data builtin:clustered-box:20000 --data2 builtin:uniform-box:20000 --box 1000 --rmax 50 --nbins 5\n",
};

const Command<HistogramOptions> rdf_command{
    .name = "rdf",
    .help = "radial distribution function g(r) in a periodic box",
    .features = {.weights = false, .box_required = true},
    .add_options = add_options,
    .run =
        [](const HistogramOptions& s, const Context& c) {
          const CommonOptions& o = s.o;
          const BackendWarmUp warm(o);
          PointSets l = load_sets(o, c.features);
          const Binning bins = make_binning(o, "r");
          const Box box = *make_box(o, l.a.dim());
          if (o.wrap) {
            wrap_into_box(l.a, box);
            if (l.cross) wrap_into_box(l.b, box);
          }
          finish(rdf(l.a, l.cross ? &l.b : nullptr, bins, box, make_run_options(o, c.bar)), o, c.bar);
        },
    .examples =
        "  twobody rdf --data builtin:uniform-box:20000 --box 1000 --rmax 100 --nbins 20\n",
};

const Command<HistogramOptions> angular_command{
    .name = "angular",
    .help = "DD(theta) pair counts on the sphere from RA, Dec (degrees)",
    .features = {.box = false, .columns_default = "1,2", .variable = "theta (degrees)"},
    .add_options = add_options,
    .run =
        [](const HistogramOptions& s, const Context& c) {
          const CommonOptions& o = s.o;
          const BackendWarmUp warm(o);
          PointSets l = load_sets(o, c.features);
          const Binning bins = make_binning(o, "theta (degrees)");
          const bool weighted = o.weight_column > 0;
          finish(angular(l.a, l.cross ? &l.b : nullptr, bins, weighted, make_run_options(o, c.bar)), o, c.bar);
        },
    .examples =
        "  twobody angular --data builtin:clustered-sky:20000 --rmin 0.01 --rmax 10 --nbins 10 --log\n"
        "  twobody angular --data builtin:clustered-sky:20000 --data2 builtin:uniform-sky:20000 --rmax 5 --nbins 5 --format table\n",
};

}  // namespace

std::vector<Subcommand> histogram_commands() {
  return {sdh_command, paircount_command, rdf_command, angular_command};
}

}  // namespace twobody::cli
