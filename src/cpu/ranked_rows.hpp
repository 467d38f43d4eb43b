#pragma once
// The rows of Spearman's correlation (matrix --kernel spearman): each row replaced by its ranks.
#include "twobody/vectors.hpp"

namespace twobody::cpu {

// Each row replaced by its ranks 1 … d, ties given their average (scipy.stats.rankdata's
// "average"): half-integers, exact in float64. On `threads` threads, a row each.
VectorSet ranked_rows(const VectorSet& v, int threads);

}  // namespace twobody::cpu
