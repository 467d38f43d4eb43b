#pragma once
// All-pairs matrices of vectors of any dimension (seed 001): D[i][j] = F(a_i, b_j) for every row
// of an n1 x d set against every row of an n2 x d set (or of one set against itself), F a named
// kernel (L_p distances, cosine, dot, Pearson, Spearman) or any pair expression
// (twobody/expression.hpp). Every named kernel is declared once, as an expression
// (matrix_kernels()): its value is that expression evaluated by the float64 rule of
// docs/exactness.md, bit for bit, whatever the tiles, the threads or the output.
//
//   twobody::MatrixOptions m;
//   m.kernel = "pearson";
//   m.output = "r.npy";  // streamed to disk a block of rows at a time; "" keeps it in memory
//   twobody::MatrixResult r = twobody::vector_matrix(x, nullptr, m);
#include <cstddef>
#include <span>
#include <string>

#include "twobody/engine.hpp"
#include "twobody/expression.hpp"
#include "twobody/pair_table.hpp"
#include "twobody/result.hpp"
#include "twobody/vectors.hpp"

namespace twobody {

// A built-in kernel: its name, other names it answers to, the expression it is (over a, b and
// the parameter p), and whether the rows are replaced by their ranks first (Spearman).
struct NamedKernel {
  const char* name;
  const char* aliases;  // comma-separated, may be empty
  const char* expression;
  bool ranks;
  const char* about;
};

// Every named kernel, in the order --help lists them.
std::span<const NamedKernel> matrix_kernels();

// How a dot-like kernel's sums are taken (docs/exactness.md#matrices-on-the-gemm-route):
// Ordered, the float64 rule's order k = 0 … d−1, the CPU's bits on every backend; Gemm, a float64
// GEMM on the GPU (cuBLAS, FP64 tensor cores) for dot, cosine, pearson, spearman, l2 and
// sqeuclidean, each entry within a stated bound (distances: the entries the bound does not cover
// recomputed by the rule); Auto, Gemm for those kernels on the cuda backend when d >= 64 and the
// rows fit on the device, Ordered otherwise.
enum class MatrixSummation { Auto, Ordered, Gemm };

struct MatrixOptions {
  // A name of matrix_kernels() (or an alias), "mi" (mutual information, not an expression), or a
  // pair expression over a and b.
  std::string kernel = "l2";
  // The parameter p of the expression: lp's order (p >= 1, finite); an expression may use it too.
  double p = 2;
  // Where the matrix goes: "" keeps it in memory (MatrixResult::values); a path ending .npy is a
  // NumPy array, .h5 or .hdf5 an HDF5 dataset /matrix, both written a block of rows at a time
  // (the resident set a few blocks at any size); any other path is text, one row a line (formed
  // in memory first). Files appear whole or not at all (a temporary beside them, renamed).
  std::string output;
  // F64, or F32 (one rounding of each float64 value): the files' element type.
  Element dtype = Element::F64;
  // Rows of a block (0: chosen from the width and the threads; TWOBODY_MATRIX_BLOCK_ROWS overrides
  // it): how much is computed before it is handed to the output. The ordered route's results do
  // not depend on it; the GEMM route's may, within their bound (cuBLAS's kernel per shape).
  std::size_t block_rows = 0;
  MatrixSummation summation = MatrixSummation::Auto;
  // How an expression that the tiles do not take is evaluated (twobody/expression.hpp).
  CpuCodegen codegen = CpuCodegen::Auto;
  // kernel "mi" (mutual information, twobody/mutual_information.hpp, in bits): its bins and the
  // B-splines' order.
  int mi_bins = 10, mi_order = 3;
};

struct MatrixResult {
  std::size_t rows = 0, cols = 0;
  MatrixValues values;  // row-major rows x cols float64, when MatrixOptions::output is ""
  std::string kernel;   // the kernel's name, or "expression"
  RunInfo info;
};

// The matrix of `a` against itself (b null: n x n, symmetric kernels computed once a pair and
// mirrored) or against `b`. Rows of any element type are promoted to float64; NaN or infinite
// values are Error(Input). RunOptions::backend "cuda" runs on the GPU (every kernel but "mi",
// which is Error(Backend) there): the kernel generated for the expression, with the CPU's bits, or
// for a dot-like kernel the GEMM route (MatrixOptions::summation; RunInfo::pairs_settled_fp64
// counts its settled entries); "auto" runs on the CPU. An output kept in memory beyond TWOBODY_MATRIX_HOST_BYTES
// (default: half the physical memory) is Error(Resource): give a .npy or HDF5 file.
MatrixResult vector_matrix(const VectorSet& a, const VectorSet* b, const MatrixOptions& opt, const RunOptions& run = {});
std::string explain_vector_matrix(const VectorSet& a, const VectorSet* b, const MatrixOptions& opt,
                                  const RunOptions& run = {});

// The matrix of a parsed pair expression over tables (twobody custom --emit matrix): its value
// for every pair, every entry computed (an expression is not taken to be symmetric).
// MatrixOptions::kernel and p are not read.
MatrixResult expression_matrix(const PairExpression& f, const PairTable& a, const PairTable* b, const MatrixOptions& opt,
                               const RunOptions& run = {});
std::string explain_expression_matrix(const PairExpression& f, const PairTable& a, const PairTable* b,
                                      const MatrixOptions& opt, const RunOptions& run = {});

// "float64" or "float32" as an element type; Error(Config) otherwise.
Element parse_matrix_dtype(const std::string& s);
// "auto", "ordered" or "gemm"; Error(Config) otherwise.
MatrixSummation parse_matrix_summation(const std::string& s);

}  // namespace twobody
