#pragma once
// Whether a Euclidean join over vectors runs on the GPU's vector grid (vector_grid.hpp) or over
// all pairs (the float64 kernel or the FP16 Gram tiles), and on which cells. Pure host code of the
// sets and the policy (tests/vector_grid_choice_test.cpp), no GPU.
//
// The grid's dimensions are the m of largest variance among those its cells split (extent >= D,
// vector_grid_cells.hpp), m from 1 to min(6, d). For each m a deterministic sample of the pairs
// (up to 1024 x 1024 rows, evenly spaced) gives the share f_m of pairs in neighbouring cells
// (the candidates the refine computes) and the share h_m in the same cell (how many rows a query's
// cell holds: the refine takes a cell's rows 32 at a time, each chunk looking its neighbour runs
// up by binary search). The rule: m minimises
//     f_m P c_pair + (n_A / Q_m) R_m c_run + (n_A + n_B) c_row,
// P the join's pairs, c_pair the float64 kernel's seconds a pair times grid_pair_factor, Q_m =
// clamp(1 + h_m n_B, 1, 32) rows a chunk, R_m the runs a chunk looks up ((3^(m-1) + 1) / 2 for a
// self-join: the half shell, LID-UNICOMP; 3^(m-1) for a cross join), c_run and c_row the
// policy's. The grid runs when that beats every all-pairs kernel's estimate (the Gram tiles' taken
// without any settlement: the grid must beat their best case).
#include <cstdint>
#include <string>
#include <vector>

#include "twobody/detail/cuda/tuning_policy.hpp"
#include "twobody/detail/cuda/vector_grid_cells.hpp"
#include "twobody/detail/engine/backend.hpp"

namespace twobody::cpu {
struct DimStats;
}

namespace twobody::cuda {

// The geometry of m grid dimensions for keys below `hi` (the range's upper key edge): `order`
// ranks the dimensions (vector_grid_order), stats give their origins and extents.
VectorGridGeometry make_vector_grid_geometry(const cpu::DimStats& stats, double hi, int m, const std::vector<int>& order);
// The dimensions by decreasing variance, those the cells of width D split (extent >= D) first;
// `split` receives how many those are.
std::vector<int> vector_grid_order(const cpu::DimStats& stats, double hi, int* split);

struct VectorGridEstimate {
  int m = 0;
  double candidate_share = 0, same_cell_share = 0;  // f_m, h_m on the sample
  double candidates = 0, chunks = 0, runs = 0;       // estimated for the join
  double seconds = 0;
};

struct VectorGridChoice {
  bool applies = false;  // the grid can serve this join (else `why` says why not)
  bool use = false;      // and runs it
  bool forced = false;
  VectorGridGeometry geometry;
  std::vector<VectorGridEstimate> estimates;  // per m considered
  double seconds_grid = 0, seconds_all_pairs = 0;
  std::uint64_t sample_pairs = 0;
  double seconds_choosing = 0;
  std::string why;  // for the plan
};

// `tiles`: the FP16 Gram tiles may run this join (else only the float64 kernel is weighed). A
// precision forced (--precision, TWOBODY_VECTOR_PRECISION) asks for an all-pairs kernel: the grid
// then runs only when forced itself.
VectorGridChoice choose_vector_grid(const VectorPlan& plan, const TuningPolicy& policy, bool tiles);

// The sample's estimates for each m (of `geometry(m)`), for tests and the choice.
std::vector<VectorGridEstimate> estimate_vector_grid(const VectorSet& a, const VectorSet* b, const cpu::DimStats& stats,
                                                     double hi, int max_m, const TuningPolicy& policy,
                                                     std::uint64_t* sample_pairs = nullptr);

// "dims 3, 0, 7 (cells 12 x 9 x 4, widths ...)": the geometry for the plan.
std::string describe_vector_grid_geometry(const VectorGridGeometry& g);

}  // namespace twobody::cuda
