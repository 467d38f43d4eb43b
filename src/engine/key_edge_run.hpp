#pragma once
// A built-in Euclidean run of points on key edges the caller gives, rather than the squares of
// the statistic's edges. A pair expression whose value is the points' distance, or its square,
// computed with the built-in key's bits runs this way (expression_run.cpp): the point paths (cell
// grids, float32 proxies with guard bands, the GPU's counting tiles) then decide its bins, each
// pair by its float64 key against these edges. The statistic's own edges (in distance) still give
// the run its reach (the grids' cutoff) and the fast paths' shape; its keys must lie within a few
// ulps of their squares, which the guard bands cover.
#include <string>
#include <vector>

#include "twobody/engine.hpp"

namespace twobody {

// `keys`: strictly increasing, one more than the statistic's bins (or its range's one bin); `why`
// is added to the plan. One backend: the caller routes no run over several devices or ranks.
Result run_on_key_edges(const Statistic& stat, const PointSet& a, const PointSet* b, const RunOptions& opt,
                        const std::vector<double>& keys, const std::string& why);
std::string explain_on_key_edges(const Statistic& stat, const PointSet& a, const PointSet* b, const RunOptions& opt,
                                 const std::vector<double>& keys, const std::string& why);

}  // namespace twobody
