#pragma once
#include <array>
#include <span>
#include <string>

#include "twobody/config.hpp"

namespace twobody {

// An orthorhombic periodic box [0, L_d) per dimension; pair separations use the minimum image.
struct Box {
  int dim = 0;
  std::array<double, kMaxDim> length{};

  static Box cube(int dim, double side);
  static Box from_lengths(std::span<const double> lengths);
  double min_length() const;
  double volume() const;
  std::string describe() const;
};

}  // namespace twobody
