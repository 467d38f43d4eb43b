#pragma once
// Bins are edges e_0 < e_1 < ... < e_n in the statistic's natural variable (r, or θ in degrees);
// bin k holds the values v with e_k <= v < e_{k+1} (half-open). See README, "The binning rule".
#include <cstddef>
#include <string>
#include <vector>

namespace twobody {

class Binning {
 public:
  Binning() = default;
  static Binning linear(double lo, double hi, std::size_t nbins);
  static Binning logarithmic(double lo, double hi, std::size_t nbins);
  // Strictly increasing, finite, non-negative edges; at least two.
  static Binning from_edges(std::vector<double> edges);
  // Edges of a value that may be negative (a pair expression's, twobody/expression.hpp):
  // strictly increasing and finite; at least two.
  static Binning of_values(std::vector<double> edges);
  static Binning linear_values(double lo, double hi, std::size_t nbins);
  // Corrfunc bin file: one bin per line, "lo hi"; consecutive bins must touch (hi_k == lo_{k+1}).
  static Binning from_file(const std::string& path);

  std::size_t nbins() const noexcept { return edges_.empty() ? 0 : edges_.size() - 1; }
  const std::vector<double>& edges() const noexcept { return edges_; }
  double lo() const { return edges_.front(); }
  double hi() const { return edges_.back(); }
  double lo(std::size_t k) const { return edges_[k]; }
  double hi(std::size_t k) const { return edges_[k + 1]; }

 private:
  explicit Binning(std::vector<double> e) : edges_(std::move(e)) {}
  std::vector<double> edges_;
};

}  // namespace twobody
