#pragma once
// The CUDA backend's tuning for one architecture (CUB's Policy900): the constants its dispatch
// (agent_choice.hpp) weighs, and the overrides that tests and benchmarks force through the
// environment, all read here and nowhere else. Host-only: the dispatch is tested without a GPU.
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>

namespace twobody::cuda {

struct TuningPolicy {
  // Architecture the constants were measured on (the H100, sm_90; other devices take them too
  // until measured: every choice below is also bounded by the device's own limits).
  int sm = 90;

  // The grid agent.
  int grid_reach = 0;              // TWOBODY_GRID_REACH=1..5: the windowed cells' reach (0: the cost model's)
  int grid_anchors = 0;            // TWOBODY_GRID_ANCHORS=1|2: anchors a lane where two may run (0: by occupancy)
  double two_anchor_occupancy = 256;  // points in an anchor's cell from which two anchors a lane pay

  // The brute-force agents over all pairs.
  bool counting_tiles = true;         // TWOBODY_COUNTING_TILES=0: the generic agent instead
  bool fp64_tensor_histogram = true;  // TWOBODY_FP64_TENSOR_HISTOGRAM=0: the CUDA-core counting tiles
  bool tensor_histogram = false;      // TWOBODY_TENSOR_HISTOGRAM=1: the TF32 tensor-core histogram
  enum class TensorCount { Auto, Tf32, Off } tensor_count = TensorCount::Auto;  // TWOBODY_TENSOR_COUNT=tf32|0
  int histogram_copies = 0;           // TWOBODY_HIST_COPIES=1..32: the tiles' copies (0: the copies model's)
  std::optional<bool> pair_flags;     // TWOBODY_HIST_PAIR_FLAGS=0|1 (none: by the guard's width)
  double pair_flags_above = 4e-3;     // share of pairs in the guard above which a flag bit a pair pays
  bool generic_copies_model = true;   // TWOBODY_GENERIC_COPIES=fit: the fitting rule's copies
  int generic_block = 0;              // TWOBODY_GENERIC_BLOCK=256|512 (0: the occupancy model's)

  // Pair lists (pair_pool.hpp): the pool's page size and pages (none: sized from free memory).
  std::optional<unsigned long long> pair_page_size;  // TWOBODY_PAIR_PAGE_SIZE
  std::optional<unsigned long long> pair_pool_pages;  // TWOBODY_PAIR_POOL_PAGES

  // Dense matrices: rows a chunk by bytes, and how chunks reach the host.
  std::size_t matrix_chunk_bytes = std::size_t(256) << 20;  // TWOBODY_MATRIX_CHUNK_BYTES
  enum class MatrixHost { Auto, Plain, Staged, Registered } matrix_host = MatrixHost::Auto;  // TWOBODY_MATRIX_HOST

  // Joins over vectors: Euclidean counts and pair lists on the FP16 Gram tiles (gram_tiles.hpp) or
  // the float64 kernel (vector_join.hpp). Auto weighs both on a sample of the pairs
  // (vector_choice.hpp) from gram_min_dim coordinates; TWOBODY_VECTOR_PRECISION (or the run's
  // --precision) =fp64 keeps every join on the float64 kernel, =fp16 takes the Gram tiles at any d
  // where they apply.
  enum class VectorPrecision { Auto, Fp64, Fp16 } vector_precision = VectorPrecision::Auto;
  int gram_min_dim = 16;  // below it the float64 kernel's d operations a pair cost less than a tile's MMAs and epilogue
  // The precision choice's cost model, seconds a pair, from the H100 measurements (bench/RESULTS.md,
  // 2026-11-27): the Gram tiles' kernels 3.9·10^11 pairs/s at d = 128 (10^5 x d 128, 5·10^9 pairs
  // in 0.0129 s), taken to grow with the padded depth above it; the float64 kernel 1.56·10^10
  // pairs/s at d = 128 and 8.9·10^8 at d = 960 (2.0·10^12 and 8.5·10^11 coordinates a second,
  // between them linear in log d); an undecided pair settled in float64 reads its two rows, 16·d
  // bytes, at about the HBM's 3·10^12 bytes a second.
  double gram_pair_seconds_d128 = 1 / 3.9e11;
  double fp64_coordinates_per_second_d128 = 2.0e12, fp64_coordinates_per_second_d960 = 8.5e11;
  double settle_bytes_per_second = 3e12;
  // The sample (deterministic): up to sample_queries x sample_partners pairs and at most
  // sample_coordinates pairs x d of float64 keys on the host (a few ms on 16 cores); joins of fewer
  // pairs than sample_min_pairs are not sampled (a few ms on either kernel: the Gram tiles from
  // gram_min_dim).
  int sample_queries = 1024, sample_partners = 4096;
  double sample_coordinates = 0x1p26;
  double sample_min_pairs = 0x1p26;
  // Undecided pairs held per slab of Gram tiles (TWOBODY_GRAM_QUEUE_PAIRS): beyond it the tiles
  // settle them themselves, slower but exact (tests force a tiny queue).
  std::size_t gram_queue_pairs = std::size_t(1) << 22;
  // The Euclidean joins' tiles on the bound in distance space (gram_tiles.hpp), or on E of the
  // norms (TWOBODY_GRAM_BOUND=distance|norms: the benchmark's before and after).
  bool gram_distance_space = true;
  // MMAs a partial sum of the joins' Gram tiles takes before it is added to the running sum
  // (exact::GramFormat::fold), from d = gram_fold_min_dim. Measured on the H200 (RESULTS,
  // 2026-11-29, eighteenth session; kernels with partials of 32 against one accumulator): d = 384
  // +10 % (partials of 16), 1 024 +4 %, 2 048 −13 %, 4 096 −38 % (43 M pairs settled → 8 M). Below
  // 2 048 the folds cost more than the narrower band saves. TWOBODY_GRAM_FOLD=N (an even number, 0
  // for one accumulator) forces N at every d.
  int gram_fold = 32;
  int gram_fold_min_dim = 2048;
  int gram_fold_for(int dim) const { return dim >= gram_fold_min_dim ? gram_fold : 0; }
  // Pairs the Gram tiles' pair-list buffer holds (TWOBODY_GRAM_PAIR_BUFFER): certain and undecided
  // pairs of a slab, settled and drained when it is done or full (gram_pairs.hpp); 32 bytes a pair
  // on the device with the compacted copy. Tests force a tiny one.
  std::size_t gram_pair_buffer = std::size_t(1) << 22;

  // The vector grid (vector_grid.hpp) for Euclidean joins at 9 <= d <= 64: TWOBODY_VECTOR_GRID
  // =grid forces it (where it applies), =off keeps it out, auto lets the estimates choose
  // (vector_grid_choice.hpp); it wins over the run's --path, as TWOBODY_CPU_JOIN does on the CPU.
  enum class VectorGrid { Auto, Grid, Off } vector_grid = VectorGrid::Auto;
  int vector_grid_dims = 0;  // TWOBODY_VECTOR_GRID_DIMS=1..6: the grid's dimensions (0: the estimates')
  // Partners a unit of the grid's refine holds at most (TWOBODY_VECTOR_GRID_PIECE): a run of
  // neighbour cells longer than this is cut, so that no warp holds a heavy cell's work alone.
  std::size_t vector_grid_piece = 4096;
  // Pairs the grid's pair-list buffer holds (TWOBODY_VECTOR_GRID_PAIRS): a launch that fills it
  // stops and the next resumes its units where they stopped (tests force a tiny one).
  std::size_t vector_grid_pairs = std::size_t(1) << 22;
  // Units (query chunk x piece of a run) the grid may list at most (16 bytes each, and the sort's
  // keys): beyond, the run falls back to the brute force and says why.
  std::size_t vector_grid_max_units = std::size_t(1) << 28;
  // The grid's cost model, predictions until measured on the H100: a candidate pair costs
  // grid_pair_factor float64 kernel pairs (its partner rows read per lane from L1, where the tiles
  // reuse a register tile 4 x 4), a neighbour run two binary searches of about 25 dependent loads
  // (grid_lookup_seconds each run), and the index a sort and a gather a row.
  double grid_pair_factor = 2.0;
  double grid_lookup_seconds = 1 / 2e9;
  double grid_row_seconds = 2e-9;

  // Points a set may have in one launch, at most (TWOBODY_CUDA_CHUNK_POINTS; 0: by device memory).
  std::size_t chunk_points = 0;

  // Queries whose k-NN lists a slab holds, at most (TWOBODY_KNN_SLAB_QUERIES; 0: by device memory):
  // the float64 kernel's slabs and the Gram k-NN's launches.
  std::size_t knn_slab_queries = 0;
  // Entries a query's list keeps on the Gram k-NN (TWOBODY_GRAM_KNN_CAPACITY, at least k; 0: k
  // and room for the candidates of the bound's band, gram_knn_capacity): tests force it down to
  // make queries fall back to the float64 kernel.
  std::size_t gram_knn_capacity = 0;

  // The policy for a device of compute capability `sm` (major·10 + minor), with the environment's
  // overrides. Read at every run: tests change the environment between runs.
  static TuningPolicy current(int sm = 90);
  // The overrides in force ("" when none), for the run's plan.
  std::string overrides() const;
};

}  // namespace twobody::cuda
