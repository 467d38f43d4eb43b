#pragma once
// The ABI between the GPU kernels of pair expressions (cuda/expression_kernels.cu, built into
// LTO-IR with the library) and the expression's own functions (emit_pair_cuda.cpp, compiled at run
// time by NVRTC), which nvJitLink links and optimises into one cubin:
//   extern "C" __device__ void tb_load_a(const TbPairArgs* args, unsigned long long i, double* slots);
//   extern "C" __device__ void tb_load_b(const TbPairArgs* args, unsigned long long j, double* slots);
//   extern "C" __device__ double tb_pair_loaded(const TbPairArgs* args, unsigned long long i,
//                                               unsigned long long j, const double* a_slots, const double* b_slots);
//   extern "C" __device__ void tb_pair_tile(const TbPairArgs* args, unsigned long long i0,
//                                           unsigned long long j0, double* out);
// tb_load_a(args, i, sa), tb_load_b(args, j, sb), tb_pair_loaded(args, i, j, sa, sb) is the value
// of pair (i, j), exactly what ExpressionRows::row gives for it, from the per-point columns the
// host's prepass computed (ExpressionRows::column, uploaded) and the constants
// (ExpressionRows::value). The loads are apart so that a kernel reads a point's scalars once for
// all the pairs a thread gives it (its anchor's, in the tiles; its column's, in the matrix) and
// keeps them in registers: the slots, kTbSideSlots doubles a side, which the link's inlining turns
// into registers. A side's further scalars and every vector's elements are read where used.
// tb_pair_tile writes the values of a tile of pairs, out[r * TILE_COLS + c] for row
// min(i0 + r, na - 1) and column min(j0 + c * TILE_STRIDE, nb - 1), each the bits tb_pair_loaded
// gives: the matrix's kernel. Where the expression loops over the dimension and its accumulators
// fit in registers, the tile runs that loop once for all its pairs, each element of a row read once
// for the tile's columns and each of a column once for its rows (seed 001's register tile);
// otherwise it evaluates its pairs one after another.
// The columns of the first TWOBODY_PAIR_HOT_NODES nodes are also in `hot`, inside the struct, which
// the kernels pass as a __grid_constant__ parameter: reading such a column's address is a read of
// the parameter bank, not a dependent load from the device's table. The fields are written once,
// here, and pasted as text into the source.
// The matrix's tile (tb_pair_tile): a thread's rows i0 … i0 + 7 against its columns j0, j0 + 32,
// j0 + 64, j0 + 96 (a warp's lanes take consecutive j0, so each column read is coalesced).
#define TWOBODY_PAIR_TILE_ROWS 8
#define TWOBODY_PAIR_TILE_COLS 4
#define TWOBODY_PAIR_TILE_STRIDE 32
#define TWOBODY_PAIR_HOT_NODES 48
#define TWOBODY_PAIR_SIDE_SLOTS 16
#define TWOBODY_PAIR_ARGS_FIELDS                                                                    \
  const double* const* column; /* node -> its per-point column (k-major for a Vector), or a      \
                                  parameter vector's d values */                                  \
  const double* value;         /* node -> its value (parameters and what they alone compute) */   \
  unsigned long long na, nb, d; /* set sizes, dimension */                                        \
  const double* hot[TWOBODY_PAIR_HOT_NODES]; /* column[node] for the first nodes */

#include <algorithm>
#include <cstddef>

namespace twobody::expr {

struct TbPairArgs {
  TWOBODY_PAIR_ARGS_FIELDS
};

inline constexpr int kTbHotNodes = TWOBODY_PAIR_HOT_NODES;
inline constexpr int kTbSideSlots = TWOBODY_PAIR_SIDE_SLOTS;
inline constexpr int kTbTileRows = TWOBODY_PAIR_TILE_ROWS;
inline constexpr int kTbTileCols = TWOBODY_PAIR_TILE_COLS;
inline constexpr int kTbTileStride = TWOBODY_PAIR_TILE_STRIDE;

// The arguments of `nodes` nodes: `column`, the table of their columns' addresses (on the device
// for a kernel), and `table_here`, the same addresses in this process's memory, whose first
// kTbHotNodes go into `hot`.
inline TbPairArgs make_pair_args(const double* const* column, const double* const* table_here, std::size_t nodes,
                                 const double* value, unsigned long long na, unsigned long long nb,
                                 unsigned long long d) {
  TbPairArgs f{};
  f.column = column;
  f.value = value;
  f.na = na;
  f.nb = nb;
  f.d = d;
  std::copy_n(table_here, std::min<std::size_t>(nodes, kTbHotNodes), f.hot);
  return f;
}

// Raised when the struct, the functions' meaning or the kernels' names change: part of every
// cache key of a linked kernel.
inline constexpr int kPairAbi = 3;

}  // namespace twobody::expr
