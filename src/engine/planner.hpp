#pragma once
#include "twobody/backend.hpp"

namespace twobody {
// Validates and plans a built-in metric (edges mapped to key space, periodic box checked).
Plan make_plan(const Statistic& s, const PointSet& a, const PointSet* b, const RunOptions& opt);
}  // namespace twobody
