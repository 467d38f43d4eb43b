// The per-point commands: neighbours (for every point, its partners within a range: a PerPoint
// reduction) and kde (kernel sums and kernel regression over the partners within a cutoff).
#include <fmt/format.h>

#include "commands.hpp"
#include "twobody/error.hpp"
#include "twobody/kde.hpp"
#include "twobody/statistics.hpp"

namespace twobody::cli {

namespace {

struct NeighbourOptions {
  CommonOptions o;
};

// One range [rmin, rmax), not bins: from --rmin/--rmax, or the whole span of a bin file.
Binning neighbour_range(const CommonOptions& o) {
  if (!o.bins_file.empty()) {
    if (o.rmin || o.rmax) throw_config("give either --bins FILE or --rmin/--rmax, not both");
    const Binning bins = Binning::from_file(o.bins_file);
    return Binning::from_edges({bins.lo(), bins.hi()});
  }
  if (!o.rmax) throw_config("a range is needed: --rmax R (with --rmin A, default 0), or --bins FILE");
  return Binning::linear(o.rmin.value_or(0.0), *o.rmax, 1);
}

const Command<NeighbourOptions> neighbours_command{
    .name = "neighbours",
    .help = "per point, the partners at a distance in [rmin, rmax) (neighbour counts), auto or cross, open or periodic",
    .features = {},
    .add_options =
        [](CLI::App& cmd, NeighbourOptions&) {
          // A range, not bins: --nbins and --log would be ignored, so they are not options here.
          cmd.remove_option(cmd.get_option("--nbins"));
          cmd.remove_option(cmd.get_option("--log"));
          cmd.get_option("--rmin")->description("lowest distance of a neighbour (default 0)");
          cmd.get_option("--rmax")->description("neighbours lie closer than this");
          cmd.get_option("--bins")->description("bin file (Corrfunc's format): the range from its first edge to its last");
          cmd.get_option("--weights-column")
              ->description("1-based column of per-point weights: adds wsum = sum of the partners' weights");
        },
    .run =
        [](const NeighbourOptions& s, const Context& c) {
          const CommonOptions& o = s.o;
          const BackendWarmUp warm(o);
          PointSet a = load_points(o.data, o.columns, o.weight_column, "");
          PointSet b;
          const bool cross = !o.data2.empty();
          if (cross) b = load_points(o.data2, o.columns2.empty() ? o.columns : o.columns2, o.weight_column, "");
          const Binning range = neighbour_range(o);
          const auto box = make_box(o, a.dim());
          if (box && o.wrap) {
            wrap_into_box(a, *box);
            if (cross) wrap_into_box(b, *box);
          }
          const bool weighted = o.weight_column > 0;
          const Result r = neighbour_counts(a, cross ? &b : nullptr, range, box, weighted, make_run_options(o, c.bar));
          c.bar.finish();
          Table t = per_point_table(r);
          t.meta["rmin"] = range.lo();
          t.meta["rmax"] = range.hi();
          emit(t, o);
        },
    .examples =
        "  twobody neighbours --data builtin:clustered-box:20000 --box 1000 --rmax 10\n"
        "  twobody neighbours --data builtin:clustered-box:20000 --data2 builtin:uniform-box:5000 --rmax 20 -o counts.csv\n",
};

struct KdeCommandOptions {
  CommonOptions o;
  double bandwidth = 0;
  std::optional<double> cutoff;
  std::string kernel = "gaussian";
  int value_column = 0;
};

// The options of kde: the bins and their range are the cutoff's business.
void add_kde_options(CLI::App& cmd, KdeCommandOptions& s) {
  for (const char* name : {"--bins", "--rmin", "--rmax", "--nbins", "--log"}) cmd.remove_option(cmd.get_option(name));
  cmd.add_option("--bandwidth", s.bandwidth, "kernel bandwidth h (the Gaussian's sigma, Epanechnikov's support)")
      ->required()
      ->check(positive_number);
  cmd.add_option("--cutoff", s.cutoff, "partners closer than this (default: 5h Gaussian, h Epanechnikov)")
      ->check(positive_number);
  cmd.add_option("--kernel", s.kernel, "gaussian (exp(-r^2/2h^2)) | epanechnikov (1 - r^2/h^2 within h)")
      ->check(CLI::IsMember({"gaussian", "epanechnikov"}));
  cmd.add_option("--value-column", s.value_column,
                 "1-based column of a value y per point: adds regression, the Nadaraya-Watson estimate "
                 "sum K y / sum K over the partners (cross: the other set's values)")
      ->check(positive_number);
  cmd.get_option("--weights-column")->description("1-based column of per-point weights w_j: density sums w_j K");
}

void run_kde(const KdeCommandOptions& s, const Context& c) {
  const CommonOptions& o = s.o;
  const BackendWarmUp warm(o);
  const bool cross = !o.data2.empty();
  const std::string columns2 = o.columns2.empty() ? o.columns : o.columns2;
  FieldCatalogue a, b;
  if (s.value_column > 0) {
    a = load_field(o.data, o.columns, o.weight_column, s.value_column, false, "value");
    if (cross) b = load_field(o.data2, columns2, o.weight_column, s.value_column, false, "value");
  } else {
    a.points = load_points(o.data, o.columns, o.weight_column, "");
    if (cross) b.points = load_points(o.data2, columns2, o.weight_column, "");
  }
  const auto box = make_box(o, a.points.dim());
  if (box && o.wrap) {
    wrap_into_box(a.points, *box);
    if (cross) wrap_into_box(b.points, *box);
  }
  KdeOptions k;
  k.kernel = parse_kde_kernel(s.kernel);
  k.bandwidth = s.bandwidth;
  k.cutoff = s.cutoff;
  k.weighted = o.weight_column > 0;
  const RunOptions run = make_run_options(o, c.bar);
  const PointSet* bp = cross ? &b.points : nullptr;
  const KernelSums sums = s.value_column > 0 ? kernel_regression(a.points, bp, a.values, b.values, k, box, run)
                                             : kernel_sums(a.points, bp, k, box, run);
  c.bar.finish();
  emit(kde_table(sums), o);
}

const Command<KdeCommandOptions> kde_command{
    .name = "kde",
    .help = "kernel sums per point (Gaussian or Epanechnikov, leave-one-out) and Nadaraya-Watson regression, "
            "auto or cross, open or periodic",
    .features = {},
    .add_options = add_kde_options,
    .run = run_kde,
    .examples =
        "  twobody kde --data builtin:clustered-box:20000 --bandwidth 5\n"
        "  twobody kde --data builtin:clustered-box:20000 --bandwidth 5 --kernel epanechnikov --box 1000 -o density.csv\n",
};

}  // namespace

std::vector<Subcommand> neighbour_commands() { return {neighbours_command, kde_command}; }

}  // namespace twobody::cli
