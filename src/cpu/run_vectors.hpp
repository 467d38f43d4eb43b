#pragma once
// The CPU backend's statistics over vectors (Backend::run_vectors): every reduction the vector
// planner admits, brute force in float64 by the rule of docs/exactness.md.
#include <string>

#include "twobody/detail/engine/backend.hpp"

namespace twobody::cpu {
Result run_vectors(const VectorPlan& plan);
std::string describe_vectors(const VectorPlan& plan);
}  // namespace twobody::cpu
