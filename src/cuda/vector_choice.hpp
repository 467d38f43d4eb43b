#pragma once
// The precision of a join on the GPU (Euclidean or cosine) (--precision auto, TWOBODY_VECTOR_PRECISION=auto):
// the FP16 Gram tiles or the float64 kernel, whichever the cost model says is the cheaper for this
// data and range. Both give the exact result; they differ in time. The Gram tiles cost a tile's
// share a pair plus, for every pair left undecided (its s̃ within the bound E of the range's edge,
// exact/gram_bounds.hpp), a float64 settlement that reads both rows; the float64 kernel costs d
// coordinates a pair. How many pairs are undecided depends on the data: few on ordinary data,
// most of them when ε is far below what FP16 resolves at the rows' norms (tight clusters far from
// the centre, near-duplicates). So the choice measures it: on a deterministic sample of pairs, the
// exact float64 keys against each pair's own E (norms and scales about the sample's centre).
// Pure host code of the sets and the policy (tests/vector_choice_test.cpp), no GPU.
#include <cstdint>
#include <string>

#include "twobody/detail/cuda/tuning_policy.hpp"
#include "twobody/statistic.hpp"
#include "twobody/vectors.hpp"

namespace twobody::cuda {

struct PrecisionChoice {
  bool gram = false;
  bool sampled = false;
  std::uint64_t pairs = 0;                         // the join's
  std::uint64_t sample_pairs = 0, sample_undecided = 0;
  int sample_queries = 0, sample_partners = 0;
  double undecided_fraction = 0;                   // of the sample
  double seconds_gram = 0, seconds_settle = 0;     // estimates: the tiles, and (of those) the settlement
  double seconds_fp64 = 0;                         // the float64 kernel
  std::string why;                                 // for the plan
};

// The choice for the join of `a` with itself (b null: pairs i < j) or with `b`, keys in [lo, hi)
// (the range's key edges) of metric `m` (Euclidean, or Cosine: the sample's rows normalised by the
// rule, no centre, the bound gram_cosine_bound), under `policy` (its Auto: by the sample; Fp16 /
// Fp64: forced).
PrecisionChoice choose_precision(const VectorSet& a, const VectorSet* b, double lo, double hi, Metric m,
                                 const TuningPolicy& policy, int threads);

// The cost model's estimates, seconds a pair at dimension d.
double gram_pair_seconds(const TuningPolicy& policy, int d);
double fp64_pair_seconds(const TuningPolicy& policy, int d);
double settle_pair_seconds(const TuningPolicy& policy, int d);

}  // namespace twobody::cuda
