#pragma once
// Mutual information between variables with the B-spline estimator of Daub et al. (BMC
// Bioinformatics 5:118, 2004), as gene-network reconstruction uses it: each row of a VectorSet is
// one variable (a gene), its d columns paired samples (arrays, cells). A sample x of row a is
// scaled to z = (x − min_a) / (max_a − min_a) · (M − k + 1) and spread over the k B-splines of
// order k (degree k − 1) on M bins of a clamped uniform knot vector whose weights sum to 1; the
// probabilities are the weights' means over the samples, single (p_i) and joint (p_ij), and
// MI(a, b) = H(a) + H(b) − H(a, b), H = −Σ p log p. k = 1 is the plain histogram estimator. A
// constant row (max = min) puts every sample in bin 0: its entropy and every MI with it are 0.
// docs/exactness.md states the float64 rule (orders of the sums, the log); every thread count and
// block split gives the same bits.
#include <cstddef>
#include <vector>

#include "twobody/engine.hpp"
#include "twobody/result.hpp"
#include "twobody/vectors.hpp"

namespace twobody {

enum class InformationUnit { Bits, Nats };  // log base 2 (Daub et al.) or e

struct MutualInformationOptions {
  int bins = 10;  // M ≥ k
  int order = 3;  // k ≥ 1: the splines' order (3: quadratic, Daub et al.'s choice)
  InformationUnit unit = InformationUnit::Bits;
};

struct MutualInformationMatrix {
  MatrixValues values;  // rows x cols, row-major: MI(a_i, b_j), or MI(a_i, a_j) (symmetric) without b
  std::size_t rows = 0, cols = 0;
  std::vector<double> entropy_a, entropy_b;  // H of each row (entropy_b empty without b)
  RunInfo info;
};

// Error(Config) for order outside 1..8 or bins outside order..1024; Error(Input) for sets of
// different numbers of samples (columns), a NaN or infinity, or rows without samples.
MutualInformationMatrix mutual_information(const VectorSet& a, const VectorSet* b, const MutualInformationOptions& opt,
                                           const RunOptions& run = {});

}  // namespace twobody
