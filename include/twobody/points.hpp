#pragma once
// A point set in structure-of-arrays form: one contiguous float64 array per coordinate, so that
// kernels load a coordinate of consecutive points with unit stride (seed 000, section 4.1).
#include <algorithm>
#include <cmath>
#include <cstddef>
#include <utility>
#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "twobody/config.hpp"

namespace twobody {

class PointSet;
// A 64-bit hash of the points' content: dimension, size, every coordinate's bits, and the weights
// and region labels when there are any. Saved counts are keyed by it (two catalogues of one size
// differ in it), not a cryptographic hash.
std::uint64_t content_hash(const PointSet& p);
// The hash of several sets in order (the random catalogues of a correlation function).
std::uint64_t content_hash(const std::vector<const PointSet*>& sets);

class PointSet {
 public:
  PointSet() = default;
  PointSet(int dim, std::size_t n);
  // The points whose coordinate d is columns[d] (all of one length), taken without a copy.
  static PointSet from_columns(std::vector<std::vector<double>> columns);
  // The points whose coordinate d is the caller's memory columns[d], read in place (no copy):
  // `owner` keeps that memory alive and unchanged for as long as the set or a copy of it lives.
  // Reading is all the engine does; anything that changes the points (coord(d) without const,
  // push_back) first copies them into memory of the set's own, leaving the caller's untouched.
  static PointSet borrow(std::vector<std::span<const double>> columns, std::shared_ptr<const void> owner);
  bool borrowed() const noexcept { return owner_ != nullptr; }

  int dim() const noexcept { return dim_; }
  std::size_t size() const noexcept { return n_; }
  bool empty() const noexcept { return n_ == 0; }

  std::span<double> coord(int d) {
    if (owner_) own();
    return {coords_[d].data(), n_};
  }
  std::span<const double> coord(int d) const { return {owner_ ? borrowed_[d] : coords_[d].data(), n_}; }

  // Optional per-point weight (pair weight w_i * w_j) and integer region label (jackknife).
  bool has_weights() const noexcept { return !weights_.empty(); }
  std::span<const double> weights() const { return {weights_.data(), weights_.size()}; }
  void set_weights(std::vector<double> w);
  bool has_regions() const noexcept { return !regions_.empty(); }
  std::span<const std::int32_t> regions() const { return {regions_.data(), regions_.size()}; }
  void set_regions(std::vector<std::int32_t> r);

  // float32 copy of coordinate d, made on first use, for fast kernels that bound their rounding.
  std::span<const float> float_view(int d) const;

  void push_back(std::span<const double> x);
  // Throws Error(Input) naming `source` and the 1-based point if any coordinate is NaN or Inf.
  void check_finite(const std::string& source) const;
  // Concatenation A ∪ B (same dimension); weights kept when both have them.
  static PointSet concat(const PointSet& a, const PointSet& b);

 private:
  void own();  // borrowed columns copied into coords_
  int dim_ = 0;
  std::size_t n_ = 0;
  std::vector<std::vector<double>> coords_;
  std::vector<const double*> borrowed_;  // (borrow: the caller's columns, kept by owner_)
  std::shared_ptr<const void> owner_;
  std::vector<double> weights_;
  std::vector<std::int32_t> regions_;
  mutable std::vector<std::vector<float>> float_;
};

// The smallest and largest value of coordinate d over both sets.
// (Threaded and vectorised: std::minmax_element took 156 ms for 10^7 points in 3-D, more than
// the GPU's whole grid run.)
std::pair<double, double> joint_range(const PointSet& a, const PointSet& b, int d);

// A box holding every point of the sets a run counts, [lo[d], hi[d]] along each axis: the frame
// in which a run places its float32 coordinates and its cells. Runs that share a frame share
// those (ResidentSet).
struct Frame {
  int dim = 0;
  double lo[kMaxDim] = {};
  double hi[kMaxDim] = {};

  // The joint range of both sets (one pass over each).
  static Frame of(const PointSet& a, const PointSet& b);
  // Wider by `fraction` of the extent at both ends of every axis.
  Frame grown(double fraction) const;
  bool holds(const Frame& f) const;
  Frame joined(const Frame& f) const;
};

}  // namespace twobody
