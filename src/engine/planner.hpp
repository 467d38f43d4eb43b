#pragma once
// The planner: validates a statistic against its points, maps its bins to key space and writes
// down what will run and why (the CLI's --explain).
#include "twobody/detail/engine/backend.hpp"

namespace twobody {
// Validates and plans a built-in metric (edges mapped to key space, periodic box checked).
Plan make_plan(const Statistic& s, const PointSet& a, const PointSet* b, const RunOptions& opt);
// The validation and planning every pair function shares, for `dim`-coordinate points; run_custom
// then maps the key edges through its function's key_of.
Plan make_plan_base(const Statistic& stat, const PointSet& a, const PointSet* b, const RunOptions& opt, int dim);
// The CPU threads a run uses: RunOptions::threads (0: all) capped at the processors; Error(Config)
// when negative.
int run_threads(const RunOptions& opt);
// A run's plan text: the backend, why it is not the one asked for (`fallback`, may be empty), the
// planner's explanation and the backend's description (engine.cpp; the device split's runs too).
std::string plan_text(const Backend& backend, const std::string& fallback, const std::string& explanation,
                      const std::string& description);
// Validates a statistic over vectors (metric, reduction, sets, k) and maps its range to key space.
VectorPlan make_vector_plan(const Statistic& s, const VectorSet& a, const VectorSet* b, const RunOptions& opt);
}  // namespace twobody
