// The per-point command, neighbours: for every point, its partners within a range (a PerPoint
// reduction).
#include "commands.hpp"
#include "twobody/error.hpp"
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
          const BackendWarmUp warm(o.backend);
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
};

}  // namespace

std::vector<Subcommand> neighbour_commands() { return {neighbours_command}; }

}  // namespace twobody::cli
