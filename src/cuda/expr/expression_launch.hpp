#pragma once
// One launch of a pair expression's kernels (expression_kernels.cu): the expression's arguments,
// the anchors and partners it covers, and where each output goes. Plain data, passed by value as
// the kernels' one __grid_constant__ parameter; the host (expression_runs.cpp) fills it.
#include "twobody/detail/cuda/output/exact_sum_atomics.cuh"
#include "twobody/detail/expr/pair_abi.hpp"

namespace twobody::cuda {

// Threads a block, one anchor each, and partners a block walks (one tile of anchors x partners).
inline constexpr int kExprAnchors = 128;
inline constexpr int kExprPartners = 512;

// A pair list's entry, PairRecord's layout (checked where the host copies it).
struct ExprPair {
  unsigned long long i, j;
  double value;
};

// A block of the grid's traversal: anchors [a0, a1) (at most kExprAnchors) against partners
// [b0, b1), in the points' cell order (the half shell of a symmetric expression's auto run, or the
// full shell).
struct ExprBlock {
  unsigned long long a0, a1, b0, b1;
  unsigned long long triangle;  // 1: a cell with itself in the half shell, partners j > i only
};

struct ExprLaunch {
  expr::TbPairArgs f;
  // The grid's blocks, one a CUDA block (null: the brute-force tiles below); an auto run on the
  // grid visits both orientations of each pair of cells and keeps the pair where the anchor's
  // original index (`order`) is the lower, as the tiles' a.
  const ExprBlock* items = nullptr;
  const unsigned* order = nullptr;
  unsigned long long* item_counts = nullptr;  // the pair list's first pass on the grid: pairs a block
  unsigned long long i0 = 0, i1 = 0;   // anchors [i0, i1)
  unsigned long long j_first = 0;      // the partner of the grid's first tile (auto: i0)
  unsigned long long nb = 0;           // partners below nb
  int is_auto = 0;                     // auto: only partners j > i

  // Count, PerPoint, PairList: values in [edges[0], edges[nbins]); Histogram: find_bin.
  const double* edges = nullptr;
  int nbins = 0, steps = 0;
  int shared_edges = 0, shared_counts = 0;  // Histogram: the edges, the counts privatised in shared memory
  unsigned long long* counts = nullptr;     // Histogram: nbins; Count, Sum: [0] the pairs counted
  unsigned long long* count_a = nullptr;    // per point: partners (count_b is count_a for auto)
  unsigned long long* count_b = nullptr;
  int anchors_only = 0;                     // per-point counts of the anchors only (a pair list's first pass)
  DeviceSumGrid grid;                       // Sum and per-point sums
  DeviceFixedSum* sum = nullptr;
  DeviceFixedSum* sums_a = nullptr;
  DeviceFixedSum* sums_b = nullptr;
  unsigned long long* extreme_a = nullptr;  // per-point minima or maxima, as ordered bits
  unsigned long long* extreme_b = nullptr;
  int of = 0;                               // per-point values: 0 sum, 1 min, 2 max
  unsigned long long* max_bits = nullptr;   // the largest |value|'s bits
  ExprPair* pairs = nullptr;                // PairList: the slab's pairs, in any order
  unsigned long long* cursor = nullptr;
  unsigned long long capacity = 0;
  double* matrix = nullptr;                 // Matrix: rows [i0, i1) x columns [c0, nb), row-major at stride ld
  unsigned long long c0 = 0, ld = 0;
};

// Matrix: a block's columns and rows; its threads, kExprMatrixColumns, each a tile of
// expr::kTbTileRows rows x kTbTileCols columns a warp-width apart (a row's element is one broadcast
// load; consecutive lanes read consecutive addresses of b's columns and write consecutive
// addresses of the output, so both are coalesced).
inline constexpr int kExprMatrixColumns = 128;
inline constexpr int kExprMatrixRows = 32;
// A lane's tile (expr::tb_pair_tile) spans the block's columns; the block's warps, its rows.
static_assert(kExprMatrixColumns == expr::kTbTileCols * expr::kTbTileStride && expr::kTbTileStride == 32);
static_assert(kExprMatrixRows == kExprMatrixColumns / 32 * expr::kTbTileRows);

// The kernels' names in the linked library (cudaLibraryGetKernel).
inline constexpr const char* kExprMaxAbsKernel = "tb_expr_max_abs";
inline constexpr const char* kExprSumKernel = "tb_expr_sum";
inline constexpr const char* kExprCountKernel = "tb_expr_count";
inline constexpr const char* kExprHistogramKernel = "tb_expr_histogram";
inline constexpr const char* kExprPerPointCountKernel = "tb_expr_per_point_count";
inline constexpr const char* kExprPerPointValueKernel = "tb_expr_per_point_value";
inline constexpr const char* kExprPairsKernel = "tb_expr_pairs";
inline constexpr const char* kExprMatrixKernel = "tb_expr_matrix";

}  // namespace twobody::cuda
