#pragma once
// Similarity joins and k nearest neighbours over vectors of any dimension (seed 004): every pair
// within ε, and the k nearest partners of every vector. Exact: each pair is decided on its float64
// key by the rule of docs/exactness.md, so the result equals a float64 brute force's, whatever the
// backend. The CLI's `twobody join` and `twobody knn`.
#include <cstdint>
#include <vector>

#include "twobody/engine.hpp"
#include "twobody/vectors.hpp"

namespace twobody {

// What a join returns: every pair, the neighbour lists (CSR), per-vector counts, or the total only.
enum class JoinOutput { Pairs, Csr, Counts, Total };

struct JoinOptions {
  // Pairs within eps (inclusive): key <= fl(eps * eps) for distances, 1 - a.b <= eps for the cosine
  // distance (docs/exactness.md). eps = 0: exact duplicates (cosine: parallel rows, to the rule).
  double eps = 0;
  Metric metric = Metric::Euclidean;  // Euclidean or Cosine
  JoinOutput output = JoinOutput::Pairs;
};

struct JoinResult {
  JoinOutput output = JoinOutput::Pairs;
  // Pairs: (i, j, distance) sorted by (i, j); auto (one set) each unordered pair once, i < j.
  // With RunOptions::pair_sink they go there as they are found instead (batches sorted by (i, j),
  // in no set order; engine.hpp), and this stays empty: a join larger than memory.
  std::vector<PairRecord> pairs;
  // Csr: vector i's neighbours are indices[indptr[i] .. indptr[i + 1]) in increasing order, with
  // their distances; auto lists every pair under both of its vectors.
  std::vector<std::uint64_t> indptr, indices;
  std::vector<double> distances;
  // Counts: per vector of the first set, its neighbours (auto: in the set; cross: in the second
  // set); cross also per vector of the second set (counts_b).
  std::vector<std::uint64_t> counts, counts_b;
  // Every output: the number of pairs within eps (auto: unordered pairs).
  std::uint64_t total = 0;
  RunInfo info;
};

// The ε-join of `a` with itself (b null) or with `b`.
JoinResult similarity_join(const VectorSet& a, const VectorSet* b, const JoinOptions& opt, const RunOptions& run = {});
// The statistic similarity_join runs (for explain(), or a caller's own run()).
Statistic join_statistic(bool cross, const JoinOptions& opt);

struct KnnResult {
  int k = 0;
  std::size_t n = 0;                  // queries
  std::vector<std::uint64_t> indices;  // n x k, row-major, nearest first; ties by the smaller index
  std::vector<double> distances;      // n x k
  RunInfo info;
};

// The k nearest neighbours of every query among `reference`, or (reference null) among the
// queries' other vectors: a vector is not its own neighbour, its duplicates are.
KnnResult nearest_neighbours(const VectorSet& queries, const VectorSet* reference, int k,
                             Metric metric = Metric::Euclidean, const RunOptions& run = {});
Statistic knn_statistic(bool cross, int k, Metric metric);

}  // namespace twobody
