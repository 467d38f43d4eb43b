// The dense matrix command, matrix: the distance (or angle) of every pair (a Matrix reduction).
#include "commands.hpp"
#include "mpi_session.hpp"
#include "twobody/error.hpp"
#include "twobody/io.hpp"
#include "twobody/statistics.hpp"

namespace twobody::cli {

namespace {

struct MatrixOptions {
  CommonOptions o;
  bool sky = false;  // RA, Dec in, angles out
};

const Command<MatrixOptions> matrix_command{
    .name = "matrix",
    .help = "dense matrix of every pair's distance (open or periodic) or, with --sky, angle in degrees; auto or cross",
    .features = {},
    .add_options =
        [](CLI::App& cmd, MatrixOptions& s) {
          // Every pair, unbinned and unweighted: the binning, weight and traversal options do not apply.
          for (const char* name :
               {"--nbins", "--log", "--rmin", "--rmax", "--bins", "--weights-column", "--path", "--format"})
            cmd.remove_option(cmd.get_option(name));
          cmd.get_option("--output")
              ->description("output file: .npy (a float64 NumPy array, rows = --data, columns = --data2) or text, one "
                            "row a line (default: text on standard output)");
          cmd.add_flag("--sky", s.sky,
                       "points are RA, Dec in degrees (columns 1,2 by default): angular separations in degrees");
        },
    .run =
        [](const MatrixOptions& s, const Context& c) {
          const CommonOptions& o = s.o;
          const bool sky = s.sky;
          const BackendWarmUp warm(o);
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
          RunOptions opt = make_run_options(o, c.bar);
          opt.distribution = nullptr;  // (a matrix is one process's: each rank would hold all of it)
          const Result r =
              sky ? angular_matrix(wa, cross ? &wb : nullptr, opt) : distance_matrix(wa, cross ? &wb : nullptr, box, opt);
          c.bar.finish();
          if (!cli_writes_output()) return;
          write_matrix(o.output, r.rows, r.cols, r.matrix);
        },
    .examples =
        "  twobody matrix --data builtin:uniform-box:500 -o distances.npy\n"
        "  twobody matrix --data builtin:uniform-sky:300 --sky -o angles.txt\n",
};

}  // namespace

std::vector<Subcommand> matrix_commands() { return {matrix_command}; }

}  // namespace twobody::cli
