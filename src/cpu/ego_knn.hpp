#pragma once
// Exact k nearest neighbours on the EGO trees (ego_index.hpp): for each leaf of the anchors' tree,
// a best-first walk of the partners' tree by box_key_bound (a proven lower bound on the rule's key
// between two boxes), the nodes whose bound exceeds the leaf's worst k-th key so far dropped, and
// within a partner leaf the anchors whose own bound exceeds their k-th key skipped. Keys come from
// the brute force's kernel (panel_keys: the rule, the same bits), and a bound drops only what is
// strictly beyond a list's k-th entry, so ties keep their smallest indices: the lists equal the
// brute force's, entry for entry. scikit-learn's trees beat the brute force by far at low d
// (bench/RESULTS.md); this is the exact counterpart.
#include <optional>
#include <string>

#include "twobody/detail/engine/backend.hpp"

namespace twobody::cpu {

// Why the EGO k-NN does not serve `plan` ("" when it does), under EgoPolicy's overrides
// (TWOBODY_CPU_JOIN, --path) and its dimension limit for k-NN.
std::string ego_knn_refusal(const VectorPlan& plan);
// The k-NN on the EGO trees (a plan ego_knn_refusal accepts), its plan text in info.plan; none
// where the brute force should take the run instead, `why` then saying why (a row not finite, the
// trees too large, or a sample of leaves that the boxes prune too little).
std::optional<Result> run_ego_nearest(const VectorPlan& plan, std::string& why);
std::string describe_ego_knn(const VectorPlan& plan);

}  // namespace twobody::cpu
