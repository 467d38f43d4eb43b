#include "twobody/detail/cuda/tuning_policy.hpp"

#include <algorithm>
#include <cstdlib>
#include <string>

#include <fmt/format.h>

#include "twobody/detail/exact/gram_bounds.hpp"
#include "twobody/error.hpp"

namespace twobody::cuda {

namespace {

const char* env(const char* name) { return std::getenv(name); }

// A whole number from 1 to `max`, or a configuration error naming the variable.
unsigned long long positive(const char* text, const char* name, unsigned long long max) {
  char* end = nullptr;
  const unsigned long long v = std::strtoull(text, &end, 10);
  if (!*text || *end || v == 0 || v > max || text[0] == '-')
    throw Error(ErrorKind::Config, fmt::format("{} must be a whole number from 1 to {}", name, max));
  return v;
}

}  // namespace

TuningPolicy TuningPolicy::current(int sm) {
  TuningPolicy p;
  p.sm = sm;
  if (const char* e = env("TWOBODY_GRID_REACH")) {
    p.grid_reach = std::atoi(e);
    if (p.grid_reach < 1 || p.grid_reach > 5) throw Error(ErrorKind::Config, "TWOBODY_GRID_REACH must be 1..5");
  }
  if (const char* e = env("TWOBODY_GRID_ANCHORS")) p.grid_anchors = std::atoi(e) == 2 ? 2 : 1;
  if (const char* e = env("TWOBODY_COUNTING_TILES")) p.counting_tiles = std::string(e) != "0";
  if (const char* e = env("TWOBODY_FP64_TENSOR_HISTOGRAM")) p.fp64_tensor_histogram = std::string(e) != "0";
  if (const char* e = env("TWOBODY_TENSOR_HISTOGRAM")) p.tensor_histogram = std::string(e) == "1";
  if (const char* e = env("TWOBODY_TENSOR_COUNT")) {
    const std::string v = e;
    p.tensor_count = v == "0" ? TensorCount::Off : v == "tf32" ? TensorCount::Tf32 : TensorCount::Auto;
  }
  if (const char* e = env("TWOBODY_HIST_COPIES")) p.histogram_copies = std::clamp(std::atoi(e), 1, 32);
  if (const char* e = env("TWOBODY_HIST_PAIR_FLAGS")) p.pair_flags = std::string(e) == "1";
  if (const char* e = env("TWOBODY_GENERIC_COPIES")) p.generic_copies_model = std::string(e) != "fit";
  if (const char* e = env("TWOBODY_GENERIC_BLOCK")) p.generic_block = std::string(e) == "512" ? 512 : 256;
  if (const char* e = env("TWOBODY_PAIR_PAGE_SIZE")) p.pair_page_size = positive(e, "TWOBODY_PAIR_PAGE_SIZE", 1ull << 20);
  if (const char* e = env("TWOBODY_PAIR_POOL_PAGES")) p.pair_pool_pages = positive(e, "TWOBODY_PAIR_POOL_PAGES", 1ull << 32);
  if (const char* e = env("TWOBODY_MATRIX_CHUNK_BYTES"))
    p.matrix_chunk_bytes = static_cast<std::size_t>(std::max(1LL, std::atoll(e)));
  if (const char* e = env("TWOBODY_MATRIX_HOST")) {
    const std::string v = e;
    p.matrix_host = v == "plain"        ? MatrixHost::Plain
                    : v == "staged"     ? MatrixHost::Staged
                    : v == "registered" ? MatrixHost::Registered
                                        : MatrixHost::Auto;
  }
  if (const char* e = env("TWOBODY_VECTOR_PRECISION")) {
    const std::string v = e;
    if (v != "auto" && v != "fp64" && v != "fp16")
      throw Error(ErrorKind::Config, "TWOBODY_VECTOR_PRECISION must be auto, fp64 or fp16");
    p.vector_precision = v == "fp64" ? VectorPrecision::Fp64 : v == "fp16" ? VectorPrecision::Fp16 : VectorPrecision::Auto;
  }
  if (const char* e = env("TWOBODY_GRAM_QUEUE_PAIRS"))
    p.gram_queue_pairs = static_cast<std::size_t>(positive(e, "TWOBODY_GRAM_QUEUE_PAIRS", 1ull << 30));
  if (const char* e = env("TWOBODY_GRAM_BOUND")) {
    const std::string v = e;
    if (v != "distance" && v != "norms") throw Error(ErrorKind::Config, "TWOBODY_GRAM_BOUND must be distance or norms");
    p.gram_distance_space = v == "distance";
  }
  if (const char* e = env("TWOBODY_GRAM_FOLD")) {
    const std::string v = e;
    p.gram_fold = v == "0" ? 0 : static_cast<int>(positive(e, "TWOBODY_GRAM_FOLD", exact::kMaxGramFold));
    if (p.gram_fold % 2) throw Error(ErrorKind::Config, "TWOBODY_GRAM_FOLD must be 0 or an even number of MMAs");
    p.gram_fold_min_dim = 0;
  }
  if (const char* e = env("TWOBODY_GRAM_PAIR_BUFFER"))
    p.gram_pair_buffer = static_cast<std::size_t>(positive(e, "TWOBODY_GRAM_PAIR_BUFFER", 1ull << 30));
  if (const char* e = env("TWOBODY_VECTOR_GRID")) {
    const std::string v = e;
    if (v != "auto" && v != "grid" && v != "off")
      throw Error(ErrorKind::Config, "TWOBODY_VECTOR_GRID must be auto, grid or off");
    p.vector_grid = v == "grid" ? VectorGrid::Grid : v == "off" ? VectorGrid::Off : VectorGrid::Auto;
  }
  if (const char* e = env("TWOBODY_VECTOR_GRID_DIMS"))
    p.vector_grid_dims = static_cast<int>(positive(e, "TWOBODY_VECTOR_GRID_DIMS", 6));
  if (const char* e = env("TWOBODY_VECTOR_GRID_PIECE"))
    p.vector_grid_piece = static_cast<std::size_t>(positive(e, "TWOBODY_VECTOR_GRID_PIECE", 1ull << 20));
  if (const char* e = env("TWOBODY_VECTOR_GRID_PAIRS"))
    p.vector_grid_pairs = static_cast<std::size_t>(positive(e, "TWOBODY_VECTOR_GRID_PAIRS", 1ull << 30));
  if (const char* e = env("TWOBODY_CUDA_CHUNK_POINTS"))
    p.chunk_points = static_cast<std::size_t>(std::max(1LL, std::atoll(e)));
  if (const char* e = env("TWOBODY_KNN_SLAB_QUERIES"))
    p.knn_slab_queries = static_cast<std::size_t>(std::max(1LL, std::atoll(e)));
  if (const char* e = env("TWOBODY_GRAM_KNN_CAPACITY"))
    p.gram_knn_capacity = static_cast<std::size_t>(positive(e, "TWOBODY_GRAM_KNN_CAPACITY", 1ull << 20));
  return p;
}

std::string TuningPolicy::overrides() const {
  const TuningPolicy d;
  std::string s;
  const auto add = [&](const std::string& what) { s += (s.empty() ? "" : ", ") + what; };
  if (grid_reach) add(fmt::format("grid reach {}", grid_reach));
  if (grid_anchors) add(fmt::format("{} grid anchors a lane", grid_anchors));
  if (!counting_tiles) add("no counting tiles");
  if (!fp64_tensor_histogram) add("no FP64 tensor-core histogram");
  if (tensor_histogram) add("the TF32 tensor-core histogram");
  if (tensor_count != d.tensor_count) add(tensor_count == TensorCount::Off ? "no tensor-core counts" : "TF32 tensor-core counts");
  if (histogram_copies) add(fmt::format("{} histogram copies", histogram_copies));
  if (pair_flags) add(*pair_flags ? "a flag bit a pair" : "no flag bits");
  if (!generic_copies_model) add("the fitting rule's copies");
  if (generic_block) add(fmt::format("generic blocks of {}", generic_block));
  if (pair_page_size) add(fmt::format("pair pages of {}", *pair_page_size));
  if (pair_pool_pages) add(fmt::format("{} pair pages", *pair_pool_pages));
  if (matrix_chunk_bytes != d.matrix_chunk_bytes) add(fmt::format("matrix chunks of {} bytes", matrix_chunk_bytes));
  if (matrix_host != d.matrix_host) add("matrix host copies forced");
  if (vector_precision != d.vector_precision)
    add(vector_precision == VectorPrecision::Fp64 ? "vector joins in float64" : "vector joins on FP16 Gram tiles");
  if (gram_queue_pairs != d.gram_queue_pairs) add(fmt::format("a Gram settle queue of {} pairs", gram_queue_pairs));
  if (gram_distance_space != d.gram_distance_space) add("the Gram joins on the bound E of the norms");
  if (gram_fold != d.gram_fold || gram_fold_min_dim != d.gram_fold_min_dim)
    add(gram_fold ? fmt::format("Gram partial sums of {} MMAs at every d", gram_fold) : "one Gram accumulator");
  if (gram_pair_buffer != d.gram_pair_buffer) add(fmt::format("a Gram pair buffer of {} pairs", gram_pair_buffer));
  if (vector_grid != d.vector_grid) add(vector_grid == VectorGrid::Grid ? "the vector grid forced" : "no vector grid");
  if (vector_grid_dims) add(fmt::format("a vector grid of {} dimensions", vector_grid_dims));
  if (vector_grid_piece != d.vector_grid_piece) add(fmt::format("vector grid units of {} partners", vector_grid_piece));
  if (vector_grid_pairs != d.vector_grid_pairs) add(fmt::format("a vector grid pair buffer of {} pairs", vector_grid_pairs));
  if (chunk_points) add(fmt::format("chunks of {} points", chunk_points));
  if (knn_slab_queries) add(fmt::format("k-NN slabs of at most {} queries", knn_slab_queries));
  if (gram_knn_capacity) add(fmt::format("Gram k-NN lists of {} entries", gram_knn_capacity));
  return s.empty() ? s : "tuning overrides (environment): " + s;
}

}  // namespace twobody::cuda
