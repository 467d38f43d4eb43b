#pragma once
// The CPU's all-pairs matrix agent (seed 001 on a multicore): the output cut into blocks of rows,
// each block into tiles of columns handed to OpenMP threads, each tile computed in slices of the
// dimension through an 8 x 16 register tile, then handed to a MatrixSink block by block.
//
// A kernel whose pair part is one reduction over an element-wise function of two per-point rows
// (a product: dot, cosine, Pearson, Spearman; a squared or absolute difference: l2, sqeuclidean,
// l1, chebyshev; any expression of that shape) takes the tiles: each entry's accumulator runs
// k = 0 … d−1 in stored order from +0 across the slices, so the value is the expression's rule
// bit for bit, whatever the tile sizes and threads. Every other expression takes the
// interpreter's (or the compiled object's) rows, 256 partners at a time. A × A of a symmetric
// kernel computes the tiles on and above the diagonal; the writer mirrors them.
#include <cstddef>
#include <functional>
#include <string>

#include "twobody/detail/expr/compiled.hpp"
#include "twobody/detail/expr/rows_abi.hpp"
#include "twobody/detail/io/matrix_writer.hpp"
#include "twobody/pair_table.hpp"

namespace twobody::cpu {

// What the tiles evaluate per element k of the pair's two rows u (a's) and v (b's).
enum class TileElement { None, Product, SquaredDifference, AbsoluteDifference };

struct TileForm {
  TileElement element = TileElement::None;  // None: the expression takes the interpreter's rows
  expr::Op reduce = expr::Op::Sum;          // Sum; ReduceMax for AbsoluteDifference too
  int reduction = -1;                       // the pair reduction's node
  int u = -1, v = -1;                       // its per-point rows: u of a, v of b
};

// The tile form of an expression (Scalar-valued, no --where), or element None.
TileForm tile_form(const expr::Compiled& c);
const char* to_string(TileElement e);

struct MatrixJob {
  const expr::Compiled* f = nullptr;
  const PairTable* a = nullptr;
  const PairTable* b = nullptr;  // a for A x A
  bool symmetric = false;        // A x A of a symmetric kernel: the half J >= I, mirrored
  int threads = 1;
  std::size_t block_rows = 0;    // chosen by matrix_shape
  std::size_t tile_cols = 0;
  expr::TbRowsFn compiled = nullptr;  // the interpreter's rows: the compiled evaluator, or null
  const std::function<void(double)>* progress = nullptr;
};

// The slice of the dimension a tile's register accumulators run through before the next panel:
// a panel of b (16 columns) stays in L1, the tile's slice of b in L2; a block's rows of a are
// packed once for all its tiles.
constexpr std::size_t kSliceK = 128;

// Block rows and tile columns for rows x cols of dimension d on `threads` (block_rows > 0: kept),
// so that a block's buffer and packed rows stay within 256 and 64 MiB and every thread has tiles.
void matrix_shape(MatrixJob& job, std::size_t rows, std::size_t cols, std::size_t d);

// Runs the job into `sink` (its rows and columns are the tables' sizes).
void run_matrix_tiles(const MatrixJob& job, const TileForm& form, MatrixSink& sink);

}  // namespace twobody::cpu
