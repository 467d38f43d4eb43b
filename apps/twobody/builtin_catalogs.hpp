#pragma once
#include <string>

#include "twobody/points.hpp"

namespace twobody::cli {
// Deterministic catalogues for trying every statistic without data:
//   clustered-sky, uniform-sky (RA, Dec in degrees, 100 000 points);
//   clustered-box, uniform-box (3-D in a periodic box of side 1000, 100 000 points).
// "NAME:N" picks another size.
PointSet builtin_catalog(const std::string& name);
}  // namespace twobody::cli
