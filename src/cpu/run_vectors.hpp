#pragma once
// The CPU backend's statistics over vectors (Backend::run_vectors): every reduction the vector
// planner admits in float64 by the rule of docs/exactness.md: brute force, or for Euclidean joins
// the EGO join when its predicted cost is lower (cpu/ego_join.hpp).
#include <string>

#include "twobody/detail/engine/backend.hpp"

namespace twobody::cpu {
// `path`: the traversal chosen (the EGO join or the brute force) and why, for describe_vectors
// after the run, which would otherwise choose again (sorting the sets again).
Result run_vectors(const VectorPlan& plan, std::string& path);
std::string describe_vectors(const VectorPlan& plan, const std::string* ran = nullptr);
}  // namespace twobody::cpu
