#pragma once
// Pair functions map a pair of points to a scalar *key* whose order is the order of the
// statistic's natural variable: r² for distances, −cos θ for angles. Binning compares keys
// against edges mapped into key space once (r_k², −cos θ_k), so no sqrt or acos is paid per pair,
// and the bin a pair lands in is decided by float64 comparisons that the README documents.
//
// A pair function is a small struct with
//   static constexpr int dim;                    (or a template parameter D)
//   TWOBODY_HD double key(const T* a, const T* b) const;  a, b: D coordinates
//   double key_of(double natural) const;           edge transform (monotone increasing)
//   double natural_of(double key) const;           inverse, for matrices and pair lists
// It runs on the host and, compiled by nvcc, on the device: user functors follow the same shape,
// and the concept PairFunction below states it.
#include <cmath>
#include <concepts>
#include <numbers>
#include <type_traits>

#include "twobody/box.hpp"
#include "twobody/config.hpp"

namespace twobody {

// What run_custom takes (twobody/extend/run_custom.hpp, .cuh): a key in float64 for two points of
// `dim` coordinates, whose order is the order of the natural variable, and the monotone map
// between the two. Trivially copyable, because the GPU backend passes it to its kernels by value.
template <class F>
concept PairFunction = std::is_trivially_copyable_v<F> && requires(const F& f, const double* a, double x) {
  { F::dim } -> std::convertible_to<int>;
  { f.key(a, a) } -> std::convertible_to<double>;
  { f.key_of(x) } -> std::convertible_to<double>;
  { f.natural_of(x) } -> std::convertible_to<double>;
};

template <int D>
struct Euclidean {
  static constexpr int dim = D;
  template <class T>
  TWOBODY_HD T key(const T* a, const T* b) const {
    T s = 0;
    for (int d = 0; d < D; ++d) {
      const T dx = a[d] - b[d];
      s += dx * dx;
    }
    return s;
  }
  double key_of(double r) const { return r * r; }
  TWOBODY_HD double natural_of(double k) const { return sqrt(k); }
};

// Minimum image in an orthorhombic box: dx = a - b, then dx -= L if dx > L/2, dx += L if
// dx < -L/2. Valid for points inside [0, L) and separations up to L/2 (the planner enforces both).
template <int D>
struct PeriodicEuclidean {
  static constexpr int dim = D;
  double length[D > 0 ? D : 1];
  double half[D > 0 ? D : 1];

  PeriodicEuclidean() = default;
  explicit PeriodicEuclidean(const Box& box) {
    for (int d = 0; d < D; ++d) {
      length[d] = box.length[d];
      half[d] = 0.5 * box.length[d];
    }
  }
  template <class T>
  TWOBODY_HD T key(const T* a, const T* b) const {
    T s = 0;
    for (int d = 0; d < D; ++d) {
      T dx = a[d] - b[d];
      dx = dx > T(half[d]) ? dx - T(length[d]) : dx;
      dx = dx < T(-half[d]) ? dx + T(length[d]) : dx;
      s += dx * dx;
    }
    return s;
  }
  double key_of(double r) const { return r * r; }
  TWOBODY_HD double natural_of(double k) const { return sqrt(k); }
};

// Angular separation of unit vectors (x, y, z) made from RA/Dec: key = −(a·b) = −cos θ, so a
// larger key is a larger angle. Edges θ_k (degrees) become −cos(θ_k·π/180).
struct AngularSeparation {
  static constexpr int dim = 3;
  template <class T>
  TWOBODY_HD T key(const T* a, const T* b) const {
    return -(a[0] * b[0] + a[1] * b[1] + a[2] * b[2]);
  }
  double key_of(double theta_deg) const { return -std::cos(theta_deg * (std::numbers::pi / 180.0)); }
  TWOBODY_HD double natural_of(double k) const {
    const double c = k < -1.0 ? 1.0 : (k > 1.0 ? -1.0 : -k);
    return acos(c) * 57.295779513082320876798154814105;  // 180/π
  }
};

static_assert(PairFunction<Euclidean<3>> && PairFunction<PeriodicEuclidean<3>> && PairFunction<AngularSeparation>);

}  // namespace twobody
