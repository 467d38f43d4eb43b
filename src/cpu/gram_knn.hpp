#pragma once
// Exact k nearest neighbours on the CPU by the Gram form (issue 22: the CPU's k-NN at d > 64 was
// half scikit-learn's speed, whose brute force is a BLAS GEMM). The rule's key Σ_k fl(fl(x − y)²)
// costs a subtraction, a product and a sum a coordinate; the Gram form q_i + q_j − 2 x'_i·x'_j on
// rows shifted to a common centre costs one fused multiply-add, in registers across Q anchors × 8
// partners (panel_keys' shape). Its value κ is not the rule's, but each pair's key lies in a proven
// interval around it (gemm_bounds.hpp's bound of the Gram form, the centring, and the rule's own
// rounding): a query keeps every partner whose interval starts below the k-th smallest interval
// end, and only those get the rule's key, so its list is the rule's, ties by index included.
#include <string>

#include "twobody/detail/cpu/vector_rows.hpp"
#include "twobody/detail/engine/backend.hpp"
#include "twobody/result.hpp"

namespace twobody::cpu {

// Why the Gram form does not serve this k-NN ("" when it does): Euclidean vectors of at least 32
// dimensions (below, the rule's own keys are as fast), unless TWOBODY_CPU_KNN=gram|rule forces it.
std::string gram_knn_refusal(const VectorPlan& plan);

// The k-NN of `plan` (whole sets, no band) by the Gram form: the rule's lists.
Result run_gram_nearest(const VectorPlan& plan, const RuleRows& A, const RuleRows& B, std::size_t tile);

}  // namespace twobody::cpu
