#pragma once
#include <array>
#include <span>
#include <string>

#include "twobody/config.hpp"

namespace twobody {

// A periodic box; pair separations use the minimum image.
//
// Orthorhombic (any dimension): [0, L_d) per dimension, `length` the sides.
// Triclinic (3-D only): the cell spanned by the rows of a lower-triangular matrix, the convention
// of GROMACS and LAMMPS,
//     a = (length[0], 0, 0),  b = (xy, length[1], 0),  c = (xz, yz, length[2]),
// with a positive diagonal; the tilts xy, xz, yz are LAMMPS's names. All tilts zero is the
// orthorhombic box itself (the same pair function, the same bits). Points lie in the cell: their
// fractional coordinates (cell_coordinates) in [0, 1).
struct Box {
  int dim = 0;
  std::array<double, kMaxDim> length{};
  double xy = 0, xz = 0, yz = 0;

  static Box cube(int dim, double side);
  static Box from_lengths(std::span<const double> lengths);
  // Cell vectors as the rows of a 3x3 matrix, row-major: a lower-triangular one (upper entries
  // exactly zero) with a positive diagonal. A general matrix is refused with the advice to rotate
  // it (rotating the points too), since the points are given in the matrix's frame.
  static Box from_matrix(std::span<const double> rows);
  // MDAnalysis' `dimensions` [a, b, c, alpha, beta, gamma] (lengths, angles in degrees, alpha
  // between b and c, beta between a and c, gamma between a and b), converted to the matrix as
  // MDAnalysis.lib.mdamath.triclinic_vectors(dimensions, dtype=numpy.float64) does (right angles
  // exactly; the same formulas). Angles outside (0, 180) or a degenerate cell are refused.
  static Box from_dimensions(std::span<const double, 6> dimensions);
  // The forms a user types (--box, Python's box=) for `dim`-D points: 1 value, a cube; `dim`
  // values, the sides; for 3-D points also 6 values, MDAnalysis dimensions, or 9, a matrix. The
  // data's dimension decides: 6 values for 6-D points are the sides of a 6-D box.
  static Box from_values(std::span<const double> values, int dim);

  bool triclinic() const { return xy != 0 || xz != 0 || yz != 0; }
  double min_length() const;
  double volume() const;
  // The distance between the cell's opposite faces spanned by the other two vectors, per vector
  // (volume / |cross product of the other two|); the sides of an orthorhombic box.
  std::array<double, 3> face_distances() const;
  // The largest separation at which the minimum image is unique and the engine's is exact: half
  // the smallest face distance (the cell's inscribed-sphere radius); L_min / 2 orthorhombic.
  double max_cutoff() const;
  // The fractional coordinates (s_a, s_b, s_c) of a 3-D point (x, y, z) = s_a a + s_b b + s_c c.
  std::array<double, 3> cell_coordinates(double x, double y, double z) const;
  std::string describe() const;
  bool operator==(const Box&) const = default;
};

}  // namespace twobody
