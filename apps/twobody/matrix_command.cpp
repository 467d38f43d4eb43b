#include "matrix_command.hpp"

#include <cstdio>
#include <iostream>

#include "mpi_session.hpp"
#include "twobody/error.hpp"
#include "twobody/io.hpp"
#include "twobody/statistics.hpp"

namespace twobody::cli {

void add_matrix_command(CLI::App& app, CommonOptions& o, ProgressBar& bar) {
  auto* cmd = app.add_subcommand(
      "matrix", "dense matrix of every pair's distance (open or periodic) or, with --sky, angle in degrees; auto or cross");
  add_common_options(*cmd, o, Features{});
  // Every pair, unbinned and unweighted: the binning, weight and traversal options do not apply.
  for (const char* name : {"--nbins", "--log", "--rmin", "--rmax", "--bins", "--weights-column", "--path", "--format"})
    cmd->remove_option(cmd->get_option(name));
  cmd->get_option("--output")
      ->description("output file: .npy (a float64 NumPy array, rows = --data, columns = --data2) or text, one row a "
                    "line (default: text on standard output)");
  cmd->add_flag("--sky", o.sky, "points are RA, Dec in degrees (columns 1,2 by default): angular separations in degrees");
  cmd->callback([&] {
    const bool sky = o.sky;
    const BackendWarmUp warm(o.backend);
    const char* columns_default = sky ? "1,2" : "";
    const PointSet a = load_points(o.data, o.columns, 0, columns_default);
    PointSet b;
    const bool cross = !o.data2.empty();
    if (cross) b = load_points(o.data2, o.columns2.empty() ? o.columns : o.columns2, 0, columns_default);
    std::optional<Box> box;
    if (sky) {
      if (!o.box.empty()) throw_config("--sky takes no --box: angles on the sphere have no periodic box");
    } else {
      box = make_box(o, a.dim());
    }
    PointSet wa = a, wb = b;
    if (box && o.wrap) {
      wrap_into_box(wa, *box);
      if (cross) wrap_into_box(wb, *box);
    }
    RunOptions opt = make_run_options(o, bar);
    opt.distribution = nullptr;  // (a matrix is one process's: each rank would hold all of it)
    if (o.explain) {
      RunOptions e = opt;
      e.progress = {};
      const Statistic s = matrix_statistic(cross, sky ? Metric::Angular : box ? Metric::Periodic : Metric::Euclidean, box);
      const PointSet ua = sky ? sky_to_unit_vectors(wa) : PointSet(), ub = sky && cross ? sky_to_unit_vectors(wb) : PointSet();
      std::cerr << explain(s, sky ? ua : wa, cross ? (sky ? &ub : &wb) : nullptr, e) << '\n';
    }
    const Result r = sky ? angular_matrix(wa, cross ? &wb : nullptr, opt) : distance_matrix(wa, cross ? &wb : nullptr, box, opt);
    bar.finish();
    if (!cli_writes_output()) return;
    write_matrix(o.output.empty() ? "/dev/stdout" : o.output, r.rows, r.cols, r.matrix);
  });
}

}  // namespace twobody::cli
