// The scalar-field correlations kk and nk (TreeCorr's KK and NK, exact).
#include "commands.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <string>
#include <vector>

#include "twobody/error.hpp"
#include "twobody/io.hpp"
#include "twobody/scalar_correlation.hpp"

namespace twobody::cli {

namespace {

struct ScalarOptions {
  CommonOptions o;
  int kappa_column = 0, kappa_column2 = 0;
  bool sky = false;
  std::string randoms;
};

std::optional<Box> box_of(const ScalarOptions& s, int dim) {
  if (s.sky && !s.o.box.empty()) throw_config("--sky and --box exclude each other");
  return s.sky ? std::nullopt : make_box(s.o, dim);
}

CorrelationSpace space_of(const ScalarOptions& s, const std::optional<Box>& box) {
  return s.sky ? CorrelationSpace::Sky : box ? CorrelationSpace::Box : CorrelationSpace::Open;
}

void wrap(PointSet& p, const std::optional<Box>& box, const CommonOptions& o) {
  if (box && o.wrap) wrap_into_box(p, *box);
}

void add_sky_option(CLI::App& cmd, ScalarOptions& s) {
  cmd.add_flag("--sky", s.sky, "points on the sky: RA, Dec in degrees (default columns 1,2), bins in degrees");
}

const Command<ScalarOptions> kk_command{
    .name = "kk",
    .help = "scalar-field correlation xi_kk = <kappa_i kappa_j> per bin (TreeCorr's KK), auto or cross",
    .features = {},
    .add_options =
        [](CLI::App& cmd, ScalarOptions& s) {
          cmd.add_option("--kappa-column", s.kappa_column, "1-based column of the scalar kappa")
              ->required()
              ->check(positive_number);
          cmd.add_option("--kappa-column2", s.kappa_column2, "kappa column of --data2 (default: as --kappa-column)")
              ->check(positive_number);
          add_sky_option(cmd, s);
          cmd.add_flag("--ravg", s.o.ravg,
                       "add the columns ravg and meanlogr: the mean separation of each bin's pairs and of its log, "
                       "weighted by w_i w_j (TreeCorr's meanr, meanlogr)");
        },
    .run =
        [](const ScalarOptions& s, const Context& c) {
          const CommonOptions& o = s.o;
          const BackendWarmUp warm(o);
          FieldCatalogue a = load_field(o.data, o.columns, o.weight_column, s.kappa_column, s.sky);
          FieldCatalogue b;
          const bool cross = !o.data2.empty();
          if (cross)
            b = load_field(o.data2, o.columns2.empty() ? o.columns : o.columns2, o.weight_column,
                           s.kappa_column2 ? s.kappa_column2 : s.kappa_column, s.sky);
          const auto box = box_of(s, a.points.dim());
          const CorrelationSpace space = space_of(s, box);
          wrap(a.points, box, o);
          if (cross) wrap(b.points, box, o);
          const ScalarCatalogue A{a.points, a.values}, B{b.points, b.values};
          const Binning bins = make_binning(o, s.sky ? "theta (degrees)" : "r");
          BinnedResult r = kk_correlation(A, cross ? &B : nullptr, bins, space, box, o.weight_column > 0,
                                          make_run_options(o, c.bar));
          c.bar.finish();
          emit(binned_table(r), o);
        },
    .examples =
        "  twobody generate clustered -n 20000 --box 100 --seed 1 -o field.txt\n"
        "  twobody kk --data field.txt --kappa-column 3 --rmax 20 --nbins 10\n",
};

const Command<ScalarOptions> nk_command{
    .name = "nk",
    .help = "count-field correlation xi_nk = <kappa_j> around the points of --data (TreeCorr's NK)",
    .features = {},
    .add_options =
        [](CLI::App& cmd, ScalarOptions& s) {
          cmd.get_option("--data2")->required()->description("the field catalogue, with the kappa column");
          cmd.add_option("--kappa-column", s.kappa_column, "1-based column of kappa in --data2")
              ->required()
              ->check(positive_number);
          cmd.add_option("--randoms", s.randoms,
                         "random catalogue of --data's footprint: xi_nk becomes NK - RK (TreeCorr's compensated)");
          add_sky_option(cmd, s);
          cmd.add_flag("--ravg", s.o.ravg,
                       "add the columns ravg and meanlogr: the mean separation of each bin's (NK) pairs and of its "
                       "log, weighted by w_i w_j (TreeCorr's meanr, meanlogr)");
        },
    .run =
        [](const ScalarOptions& s, const Context& c) {
          const CommonOptions& o = s.o;
          const BackendWarmUp warm(o);
          const char* def = s.sky ? "1,2" : "";
          PointSet n = load_points(o.data, o.columns, o.weight_column, def);
          FieldCatalogue k = load_field(o.data2, o.columns2.empty() ? o.columns : o.columns2, o.weight_column,
                                        s.kappa_column, s.sky);
          PointSet r;
          if (!s.randoms.empty()) r = load_points(s.randoms, o.columns, o.weight_column, def);
          const auto box = box_of(s, n.dim());
          const CorrelationSpace space = space_of(s, box);
          wrap(n, box, o);
          wrap(k.points, box, o);
          if (!s.randoms.empty()) wrap(r, box, o);
          const Binning bins = make_binning(o, s.sky ? "theta (degrees)" : "r");
          BinnedResult x = nk_correlation(n, {k.points, k.values}, s.randoms.empty() ? nullptr : &r, bins, space, box,
                                          o.weight_column > 0, make_run_options(o, c.bar));
          c.bar.finish();
          emit(binned_table(x), o);
        },
    .examples =
        "  twobody generate clustered -n 20000 --box 100 --seed 1 -o field.txt\n"
        "  twobody generate clustered -n 5000 --box 100 --seed 2 -o lenses.txt\n"
        "  twobody nk --data lenses.txt --columns 1,2 --data2 field.txt --kappa-column 3 --rmax 20 --nbins 10\n",
};

}  // namespace

std::vector<Subcommand> scalar_commands() { return {kk_command, nk_command}; }

}  // namespace twobody::cli
