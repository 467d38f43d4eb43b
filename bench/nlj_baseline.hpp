#pragma once
// A hand-written GPU nested-loop join with a non-equality predicate (issue 23's case study, seed
// 000's NLJ): r.t < s.t and |r.x - s.x| < w over every pair of two tables, a thread an R row,
// S in tiles of shared memory, matches written with one atomic a warp step after a counting pass
// sized the buffer. The peer of twobody's generated kernel in bench/nlj_bench.cpp.
#include <cstdint>
#include <utility>
#include <vector>

struct NljResult {
  double seconds = 0;  // both passes and the copy of the pairs back, the upload excluded
  std::vector<std::pair<std::uint32_t, std::uint32_t>> pairs;  // (r, s), in no order
};

NljResult shared_memory_nlj(const std::vector<double>& rt, const std::vector<double>& rx, const std::vector<double>& st,
                            const std::vector<double>& sx, double w);
