#pragma once
// The Epsilon Grid Order of a vector set (Böhm et al. 2001; Super-EGO, Kalashnikov 2013; seed 004
// §4.3.2) as a tree of index ranges with float64 bounding boxes: the rows sorted by the tuple of
// their cells of width ε (dimensions by decreasing variance, the Super-EGO reordering), then each
// range split where its cells change, along the first dimension where its first and last rows'
// cells differ (never at a bare middle index while the cells can still separate it), so that a
// range is compact along one dimension after another. The cells only order and split; pruning
// (ego_join.cpp) uses the boxes of the rows themselves, whose lower bound on the rule's key is
// proven below, so a cell computed an ulp off can cost pruning but never a pair.
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <vector>

#include "twobody/vectors.hpp"

namespace twobody::cpu {

// The cells both sets of a join share: their origin and width per dimension, and the dimensions
// of the sort key (those of two cells or more) by decreasing variance.
struct EgoGrid {
  std::vector<int> dims;       // stored-order indices of the key's dimensions
  std::vector<double> origin;  // per key dimension: the least coordinate of both sets
  std::vector<double> width;   // per key dimension: eps, or extent / 2^20 when that is wider
  bool finite = true;          // every coordinate of both sets is finite (else no EGO)
  // `eps`: the cell width asked for (the join's distance).
  static EgoGrid make(const VectorSet& a, const VectorSet* b, double eps, int threads);
};

// A node of the tree: the rows [begin, end) of the order; an inner node's children are the nodes
// child and child + 1 (their ranges split it), a leaf has child -1.
struct EgoNode {
  std::uint32_t begin = 0, end = 0;
  std::int32_t child = -1;
  std::uint32_t size() const { return end - begin; }
  bool leaf() const { return child < 0; }
};

class EgoIndex {
 public:
  // Sorts `v`'s rows by cell (ties by index, so the order is unique), copies them in that order as
  // float64 (the rule's values: the promotion is exact) and builds the tree down to leaves of at
  // most `leaf` rows.
  EgoIndex(const VectorSet& v, const EgoGrid& grid, std::size_t leaf, int threads);

  std::size_t size() const { return order_.size(); }
  int dim() const { return dim_; }
  // order()[p]: the caller's index of the row at position p.
  const std::vector<std::uint32_t>& order() const { return order_; }
  // The rows in EGO order, row-major float64.
  const VectorSet& rows() const { return rows_; }
  const double* row(std::size_t p) const { return static_cast<const double*>(rows_.row(p)); }
  // A leaf's rows in panels of 8 (vector_rows.hpp: panel_keys), as the kernel reads its partners:
  // coordinate k of its row begin + t at panels(leaf)[(t / 8) * 8 * dim + k * 8 + t % 8].
  const double* panels(std::size_t leaf) const { return panels_.data() + panel_at_[leaf]; }
  const std::vector<EgoNode>& nodes() const { return nodes_; }
  const double* lo(std::size_t node) const { return lo_.data() + node * static_cast<std::size_t>(dim_); }
  const double* hi(std::size_t node) const { return hi_.data() + node * static_cast<std::size_t>(dim_); }
  std::size_t leaves() const { return leaves_; }
  // Bytes an index of n rows of d dimensions holds at most (rows twice, order, cells while it
  // sorts, and the tree's boxes for leaves of `leaf` rows), for the memory check before building one.
  static double bytes(std::size_t n, int d, std::size_t keys, std::size_t leaf);

 private:
  void sort_by_cell(const VectorSet& v, const EgoGrid& grid, std::vector<std::int32_t>& cells, int threads);
  void build_tree(const std::vector<std::int32_t>& cells, std::size_t keys, std::size_t leaf);
  void build_boxes(int threads);
  void panel_leaves(int threads);

  int dim_ = 0;
  std::vector<std::uint32_t> order_;
  VectorSet rows_;
  std::vector<EgoNode> nodes_;
  std::vector<double> lo_, hi_, panels_;
  std::vector<std::size_t> panel_at_;  // per leaf: where its panels start
  std::size_t leaves_ = 0;
};

// A lower bound on the rule's key of every pair (a, b) with a in the box [alo, ahi] and b in
// [blo, bhi], stopping once it reaches `stop` (then it is at least `stop`). Proof: per dimension
// the gap g = fl(alo_k − bhi_k) when positive (or fl(blo_k − ahi_k)), else 0; a_k − b_k ≥ alo_k − bhi_k
// exactly, rounding is monotone, so |fl(a_k − b_k)| ≥ g, and fl(fl(a_k − b_k)²) ≥ fl(g²) (squaring
// a non-negative double and rounding, again monotone); the rule's key is the sum of those terms in
// stored order, each addition rounded, and rounding a sum is monotone in both addends, so the same
// sum of the fl(g²) in the same order is at most the key. No FMA (the library is built with
// -ffp-contract=off): fusing g² into the sum would round differently from the key's squares.
inline double box_key_bound(const double* alo, const double* ahi, const double* blo, const double* bhi, int d,
                            double stop) {
  double s = 0;
  for (int k = 0; k < d; ++k) {
    // (Of the two differences at most one is positive: rounding keeps a nonzero difference's
    // sign, and alo − bhi > 0 puts blo − ahi below 0; max() is then the gap.)
    const double g = std::max(std::max(alo[k] - bhi[k], blo[k] - ahi[k]), 0.0);
    const double square = g * g;
    s += square;
    if (s >= stop) break;
  }
  return s;
}

}  // namespace twobody::cpu
