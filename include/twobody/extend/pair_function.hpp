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
#include "twobody/extend/portable_math.hpp"

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

// Minimum image in a triclinic cell (Box::triclinic(): rows a = (ax, 0, 0), b = (bx, by, 0),
// c = (cx, cy, cz)). The key is the least, over images n = (na, nb, nc), of
//     image_key(d, n) = x² + y² + z²,  z = dz − nc·cz,  y = (dy − nc·cy) − nb·by,
//                                       x = ((dx − nc·cx) − nb·bx) − na·ax,   d = a − b,
// evaluated in exactly this order: that formula is what "the float64 brute force" means in a
// triclinic cell (docs/molecular-dynamics.md), and the tests' oracle takes the least of it over
// all 125 images n in [-2, 2]³.
//
// Which images: f = d's fractional coordinates (f_a a + f_b b + f_c c = d), n0 = round(f),
// f0 = f − n0 in [−1/2, 1/2]. Any other image n differs from n0 along some axis i, so its
// fractional coordinate there is at least 1 − |f0_i| in size and its length at least
// (1 − |f0_i|)·h_i (h_i the distance between the faces; f_i is d against the reciprocal vector,
// of length 1/h_i). With r = the inscribed-sphere radius min h / 2 (the planner's limit on r_max):
//   - if every |f0_i| < near_i = 1 − (1 + 1e-6)·r / h_i, every other image is longer than
//     r·(1 + 1e-6), its float64 key above any edge, and n0's key is the brute force's wherever a
//     bin can see it (the usual case: near_i ≥ 1/2 − 1e-6, so only d within a hair of a face at
//     half a cell misses it);
//   - else a shortest image within r·(1 + 1e-6) has |f*_i| ≤ 1/2 + 1e-6, so m = n − n0 has m_i in
//     {0, sign f0_i}: the eight images n0 + m hold it, ties and near-ties at the face included,
//     and the key is their least.
// The rounding of f in float64 (about 1e-16 of the tilts over the diagonal) is far inside both
// margins. With points in the cell (fractional coordinates in [0, 1)), |f| < 1 and every image the
// key uses lies in [-2, 2]³, where na·ax and the like are exact.
struct PeriodicTriclinic {
  static constexpr int dim = 3;
  double ax = 1, bx = 0, by = 1, cx = 0, cy = 0, cz = 1;

  // Reciprocals of the diagonal: f only picks images, so a product's extra ulp is harmless, and
  // three divisions were half the key's time.
  double inv_ax = 1, inv_by = 1, inv_cz = 1;
  double near[3] = {0.5, 0.5, 0.5};  // |f0_i| below which n0 is the only image within reach

  PeriodicTriclinic() = default;
  explicit PeriodicTriclinic(const Box& box)
      : ax(box.length[0]), bx(box.xy), by(box.length[1]), cx(box.xz), cy(box.yz), cz(box.length[2]),
        inv_ax(1 / ax), inv_by(1 / by), inv_cz(1 / cz) {
    const auto h = box.face_distances();
    const double reach = (1 + 1e-6) * box.max_cutoff();
    for (int i = 0; i < 3; ++i) near[i] = 1 - reach / h[i];
  }

  template <class T>
  TWOBODY_HD T image_key(T dx, T dy, T dz, T na, T nb, T nc) const {
    const T z = dz - nc * T(cz);
    const T y = (dy - nc * T(cy)) - nb * T(by);
    const T x = ((dx - nc * T(cx)) - nb * T(bx)) - na * T(ax);
    T s = 0;
    s += x * x;
    s += y * y;
    s += z * z;
    return s;
  }
  template <class T>
  TWOBODY_HD T key(const T* a, const T* b) const {
    const T dx = a[0] - b[0], dy = a[1] - b[1], dz = a[2] - b[2];
    // Fractional coordinates of d, rounded to the nearest image; their rounding only picks images.
    const T fc = dz * T(inv_cz);
    const T fb = (dy - fc * T(cy)) * T(inv_by);
    const T fa = (dx - fb * T(bx) - fc * T(cx)) * T(inv_ax);
    const T na = rint(fa), nb = rint(fb), nc = rint(fc);
    T best = image_key(dx, dy, dz, na, nb, nc);
    if (fabs(fa - na) < T(near[0]) && fabs(fb - nb) < T(near[1]) && fabs(fc - nc) < T(near[2])) return best;
    const T ma = fa >= na ? T(1) : T(-1), mb = fb >= nb ? T(1) : T(-1), mc = fc >= nc ? T(1) : T(-1);
    for (int k = 1; k < 8; ++k) {
      const T s = image_key(dx, dy, dz, (k & 1) ? na + ma : na, (k & 2) ? nb + mb : nb, (k & 4) ? nc + mc : nc);
      best = s < best ? s : best;
    }
    return best;
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
    return portable::acos(c) * 57.295779513082320876798154814105;  // 180/π (the host's and the device's bits alike)
  }
};

static_assert(PairFunction<Euclidean<3>> && PairFunction<PeriodicEuclidean<3>> && PairFunction<PeriodicTriclinic> &&
              PairFunction<AngularSeparation>);

}  // namespace twobody
