#pragma once
// A statistic is a declaration handed to the engine: which pairs (traversal), what a pair is worth
// (metric / pair function), and what the pairs reduce into (a reduction type, reduction.hpp).
// Kernels, threads, privatised histograms and output buffers live once, in the backends.
#include "twobody/binning.hpp"
#include "twobody/binning2d.hpp"
#include "twobody/box.hpp"
#include "twobody/reduction.hpp"

namespace twobody {

// Auto: one set, each unordered pair i<j once. Cross: two sets, every (i, j).
enum class Traversal { Auto, Cross };

// Euclidean and Periodic take 1..kMaxDim coordinates; Angular takes unit vectors (x, y, z).
// Vectors (twobody/vectors.hpp) take Euclidean (any dimension) and Cosine: the cosine distance
// 1 − â·b̂ of the rows normalised in float64 (docs/exactness.md states the rule).
enum class Metric { Euclidean, Periodic, Angular, Cosine };

// Which fields of a Result a run fills (reduction.hpp says what each reduction puts there):
// Reduction for reduce::Count, Histogram for reduce::Histogram and Histogram2D, PairList, Matrix,
// PerPoint for PerPoint, Nearest for reduce::Nearest; a pair expression's reduce::Sum fills
// Reduction's counts and value_sum, reduce::PerPointValue PerPoint's arrays and their values.
enum class OutputKind { Reduction, Histogram, PairList, Matrix, PerPoint, Nearest };

struct Statistic {
  Traversal traversal = Traversal::Auto;
  Metric metric = Metric::Euclidean;
  Box box;                // Periodic only
  bool weighted = false;  // add w_i * w_j per pair (PerPoint: the partner's w), both sets need weights
  Reduction reduction = reduce::Histogram{};

  // Views of `reduction` for code that treats several reductions alike.
  OutputKind output() const;
  // The 1-D bins of a Histogram, or the range [lo, hi) of a Count, PairList or PerPoint (its
  // nbins() is what the run was given); empty for a Matrix, Nearest and 2-D bins.
  const Binning& binning() const;
  // A range's include_hi (Count, PairList, PerPoint): [lo, hi] rather than [lo, hi).
  bool includes_hi() const;
  // The 2-D bins of a Histogram2D; an inactive Binning2D otherwise.
  const Binning2D& binning2d() const;
  bool is_2d() const { return std::holds_alternative<reduce::Histogram2D>(reduction); }
  // A histogram's options (reduce::Histogram, Histogram2D); 0 and false for the others.
  int regions() const;
  bool mean_separation() const;
  // Set a histogram's options; Error(Config) on a reduction without them.
  void set_regions(int regions);
  void set_mean_separation(bool on);
};

const char* to_string(Metric m);
const char* to_string(OutputKind k);

}  // namespace twobody
