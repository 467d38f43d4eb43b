#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "twobody/statistic.hpp"

namespace twobody {

struct PairRecord {
  std::uint64_t i;
  std::uint64_t j;
  double value;  // natural variable: r, or θ in degrees
};

struct RunInfo {
  std::string backend;
  std::string device;
  int threads = 0;
  std::size_t n_a = 0, n_b = 0;      // points in the first and (cross) second set
  double seconds = 0;                // kernel wall time, excluding file parsing
  std::uint64_t pairs_evaluated = 0;  // distinct pairs whose value was computed
  std::uint64_t pairs_settled_fp64 = 0;  // fast path: pairs re-evaluated in float64 near an edge
  std::string plan;                  // the planner's explanation
};

struct Result {
  OutputKind output = OutputKind::Histogram;
  std::vector<std::uint64_t> counts;  // Histogram: one per bin; Reduction: one
  std::vector<double> weighted;       // sums of w_i w_j beside counts, when weighted
  std::vector<PairRecord> pairs;      // PairList, sorted by (i, j)
  std::vector<double> matrix;         // Matrix, row-major rows x cols
  std::size_t rows = 0, cols = 0;
  RunInfo info;

  double pairs_per_second() const {
    return info.seconds > 0 ? static_cast<double>(info.pairs_evaluated) / info.seconds : 0.0;
  }
};

}  // namespace twobody
