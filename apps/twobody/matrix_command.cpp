// The dense matrix command, matrix: the distance (or angle) of every pair of points (a Matrix
// reduction), or with --kernel the all-pairs matrix of vectors of any dimension under a named
// kernel or an expression (twobody/matrices.hpp), streamed to .npy or HDF5 files.
#include <fmt/format.h>

#include "commands.hpp"
#include "mpi_session.hpp"
#include "twobody/error.hpp"
#include "twobody/io.hpp"
#include "twobody/matrices.hpp"
#include "twobody/statistics.hpp"

namespace twobody::cli {

namespace {

struct MatrixOptions {
  CommonOptions o;
  bool sky = false;  // RA, Dec in, angles out
  std::string kernel, dtype = "float64", cpu_codegen = "auto", summation = "auto";
  std::optional<double> p;
  int mi_bins = 10, mi_order = 3;
};

// --kernel: vectors of any dimension, every kernel an expression.
void run_vector_matrix(const MatrixOptions& s, const Context& c) {
  const CommonOptions& o = s.o;
  if (s.sky) throw_config("--sky takes no --kernel: a kernel pairs vectors (give the sky's unit vectors instead)");
  if (!o.box.empty()) throw_config("--kernel takes no --box: the kernels pair vectors without a periodic box");
  const VectorSet a = load_vectors(o.data, o.columns);
  const bool cross = !o.data2.empty();
  VectorSet b;
  if (cross) b = load_vectors(o.data2, o.columns2.empty() ? o.columns : o.columns2);
  twobody::MatrixOptions m;
  m.kernel = s.kernel;
  if (s.p) m.p = *s.p;
  m.dtype = parse_matrix_dtype(s.dtype);
  m.codegen = parse_cpu_codegen(s.cpu_codegen);
  m.summation = parse_matrix_summation(s.summation);
  m.mi_bins = s.mi_bins;
  m.mi_order = s.mi_order;
  // Files stream block by block; without -o the text goes to standard output from memory.
  if (cli_writes_output() && !is_standard_output(o.output)) m.output = o.output;
  RunOptions run = make_run_options(o, c.bar);
  run.distribution = nullptr;  // (a matrix is one process's: each rank would hold all of it)
  const MatrixResult r = vector_matrix(a, cross ? &b : nullptr, m, run);
  c.bar.finish();
  if (!cli_writes_output() || !m.output.empty()) return;
  MatrixValues v = r.values;
  if (m.dtype == Element::F32)
    for (double& x : v) x = static_cast<double>(static_cast<float>(x));
  write_matrix(o.output, r.rows, r.cols, v);
}

std::string kernel_help() {
  std::string h = "a kernel over vectors of any dimension, by name or as an expression over a and b (docs/matrices.md):";
  for (const NamedKernel& k : matrix_kernels())
    h += fmt::format("\n  {}{}: {}", k.name, *k.aliases ? fmt::format(" ({})", k.aliases) : "", k.about);
  h += "\n  mi (mutual-information): mutual information in bits, Daub et al.'s B-spline estimator (--mi-bins, --mi-order)";
  return h;
}

const Command<MatrixOptions> matrix_command{
    .name = "matrix",
    .help = "dense matrix of every pair's distance (open or periodic), angle (--sky), or --kernel over vectors of any "
            "dimension (l2, lp, cosine, dot, pearson, spearman, an expression); auto or cross",
    .features = {},
    .add_options =
        [](CLI::App& cmd, MatrixOptions& s) {
          // Every pair, unbinned and unweighted: the binning, weight and traversal options do not apply.
          for (const char* name :
               {"--nbins", "--log", "--rmin", "--rmax", "--bins", "--weights-column", "--path", "--format"})
            cmd.remove_option(cmd.get_option(name));
          cmd.get_option("--output")
              ->description("output file: .npy (a NumPy array, rows = --data, columns = --data2; with --kernel written a "
                            "block of rows at a time), .h5 (dataset /matrix) or text, one row a line (default: text on "
                            "standard output)");
          cmd.add_flag("--sky", s.sky,
                       "points are RA, Dec in degrees (columns 1,2 by default): angular separations in degrees");
          cmd.add_option("--kernel", s.kernel, kernel_help());
          cmd.add_option("--mi-bins", s.mi_bins, "--kernel mi: bins of the B-spline estimator (default 10)");
          cmd.add_option("--mi-order", s.mi_order, "--kernel mi: order of the B-splines, 1 (histogram) to 8 (default 3)");
          cmd.add_option("--p", s.p, "lp's order p >= 1 (default 2); also the parameter p of a --kernel expression");
          cmd.add_option("--dtype", s.dtype, "with --kernel: the output's element type, float64 or float32 (one rounding)")
              ->check(CLI::IsMember({"float64", "float32"}));
          cmd.add_option("--summation", s.summation,
                         "with a dot-like --kernel (dot, cosine, pearson, spearman, l2, sqeuclidean) on --backend cuda: "
                         "auto (a float64 GEMM when d >= 64), ordered (the float64 rule's order, the CPU's bits) or gemm "
                         "(cuBLAS, FP64 tensor cores; each entry within the bound --explain states)")
              ->check(CLI::IsMember({"auto", "ordered", "gemm"}));
          cmd.add_option("--cpu-codegen", s.cpu_codegen,
                         "with a --kernel expression the tiles do not take: auto | on | off (docs/expressions.md)")
              ->check(CLI::IsMember({"auto", "on", "off"}));
        },
    .run =
        [](const MatrixOptions& s, const Context& c) {
          if (!s.kernel.empty()) return run_vector_matrix(s, c);
          if (s.p || s.dtype != "float64" || s.cpu_codegen != "auto" || s.summation != "auto")
            throw_config("--p, --dtype, --cpu-codegen and --summation go with --kernel");
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
        "  twobody matrix --data builtin:uniform-sky:300 --sky -o angles.txt\n"
        "  twobody matrix --data builtin:clustered-box:400 --kernel pearson -o r.npy\n"
        "  twobody matrix --data builtin:uniform-box:300 --data2 builtin:clustered-box:200 --kernel lp --p 3 --dtype float32 "
        "-o d.h5\n"
        "  twobody matrix --data builtin:uniform-box:300 --kernel 'sum(abs(a - b)) / d' -o m.npy\n",
};

}  // namespace

std::vector<Subcommand> matrix_commands() { return {matrix_command}; }

}  // namespace twobody::cli
