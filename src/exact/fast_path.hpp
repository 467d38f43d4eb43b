#pragma once
// The float32 fast path and how it stays exact.
//
// A fast kernel evaluates a *proxy* of each pair's key in float32 (d² from float32 coordinates, or
// the chord² between float32 unit vectors for angles). Each bin edge K of the float64 rule becomes
// a guard band [L, H) in proxy space, from a rigorous bound on |proxy32 − proxy(key64)|:
//   proxy32 <  L  ⇒  key64 <  K   (the pair is certainly below the edge)
//   proxy32 >= H  ⇒  key64 >= K   (certainly at or above it)
// A pair whose proxy falls inside some band is re-evaluated in float64 and binned by the float64
// rule. So the fast path returns exactly the float64 counts, and the fraction of pairs re-evaluated
// is the fraction lying within a few float32 ulps of an edge.
//
// The bound per edge (u = 2^-24, M = largest |coordinate| after the shift below, D dimensions):
//   per-coordinate error of the float32 difference   η(d) = 2uM(1+u) + u(d + 2uM) (+ wrap terms)
//   error of Σ dx²                                  E32 = η(2√D d + Dη) + γ_D (d² + 2η√D d + Dη²)
//   float64 rounding of the reference itself         E64 = γ64_{D+2} d² + (shift rounding)
// with γ_n = nu/(1−nu). Coordinates are shifted to the centre of their range in float64 first, so M
// is half the data's extent, not its distance from the origin (1e4 + small spread stays fast).
#include <cmath>
#include <algorithm>
#include <cstdint>
#include <cstring>
#include <limits>
#include <vector>

#include "twobody/detail/engine/key_edges.hpp"
#include "twobody/config.hpp"
#include "twobody/extend/pair_function.hpp"

namespace twobody {

// Guard bands, one [L, H) per edge.
struct GuardBands {
  std::vector<float> lo;  // L per edge
  std::vector<float> hi;  // H per edge
  int nbins = 0;
  int steps = 0;
};

// Classifies a float32 proxy against nbins+1 guard bands: returns the bin (>= 0), -1 when the
// pair is certainly outside every bin, or -2 when it must be settled in float64. `steps` is
// ceil(log2(nbins + 1)); probes past the last edge are skipped, so the arrays need no padding.
TWOBODY_HD int classify_proxy(const float* lo, const float* hi, int nbins, int steps, float s) {
  if (!(s >= lo[0])) return -1;
  int k = 0;
  for (int st = steps - 1; st >= 0; --st) {
    const int probe = k + (1 << st);
    k = (probe <= nbins && lo[probe] <= s) ? probe : k;
  }
  if (s < hi[k]) return -2;
  return k < nbins ? k : -1;
}

// find_bin for arrays of exactly nbins+1 edges (no padding).
TWOBODY_HD int find_bin_unpadded(const double* e, int nbins, int steps, double key) {
  if (!(key >= e[0]) || !(key < e[nbins])) return -1;
  int k = 0;
  for (int st = steps - 1; st >= 0; --st) {
    const int probe = k + (1 << st);
    k = (probe <= nbins && e[probe] <= key) ? probe : k;
  }
  return k;
}

namespace fast_detail {
constexpr double u32 = 0x1p-24;
constexpr double u64 = 0x1p-53;
inline double gamma(int n, double u) { return n * u / (1.0 - n * u); }
inline float round_down(double x) {
  float f = static_cast<float>(x);
  return static_cast<double>(f) > x ? std::nextafter(f, -std::numeric_limits<float>::infinity()) : f;
}
inline float round_up(double x) {
  float f = static_cast<float>(x);
  return static_cast<double>(f) < x ? std::nextafter(f, std::numeric_limits<float>::infinity()) : f;
}
}  // namespace fast_detail

// Error model of a pair function's fast path. Specialised per pair function below.
//   proxy_of_key(K): the proxy value that corresponds to float64 key K (monotone increasing)
//   bound(d): |proxy32 − proxy(key64)| for a pair at natural-scale distance d (increasing in d)
//   d_of_proxy(P): the natural-scale distance of proxy P
struct DistanceErrorModel {
  int dim = 3;
  double M = 0;        // max |coordinate| after the shift
  double offset = 0;   // max |original coordinate| (rounding of the float64 shift)
  double wrap = 0;     // periodic: largest box side, else 0

  double proxy_of_key(double k) const { return k; }
  double d_of_proxy(double p) const { return p > 0 ? std::sqrt(p) : 0.0; }
  double bound(double d) const {
    using namespace fast_detail;
    const double D = dim, sD = std::sqrt(D);
    double eta = 2 * u32 * M * (1 + u32) + u32 * (d + 2 * u32 * M) + 2 * u64 * offset;
    if (wrap > 0) eta = 3 * eta + 4 * u32 * wrap + 4 * u64 * wrap;
    const double e32 = eta * (2 * sD * d + D * eta) + gamma(dim, u32) * (d * d + 2 * eta * sD * d + D * eta * eta);
    const double e64 = gamma(dim + 2, u64) * d * d + 4 * u64 * (offset + wrap) * d * sD;
    return 1.01 * (e32 + e64) + 1e-300;
  }
};

// Angles: proxy = chord² = |a − b|² of float32 unit vectors, tied to key64 = −(a·b) by
// chord² = 2 + 2·key (exact for unit vectors; the float64 vectors' norms differ from 1 by a few
// ulps, covered by the constant term).
struct ChordErrorModel {
  double proxy_of_key(double k) const { return 2.0 + 2.0 * k; }
  double d_of_proxy(double p) const { return p > 0 ? std::sqrt(p) : 0.0; }
  double bound(double c) const {
    using namespace fast_detail;
    const double eta = 2 * u32 * (1 + u32) + u32 * (c + 2 * u32);
    const double s3 = std::sqrt(3.0);
    const double e32 = eta * (2 * s3 * c + 3 * eta) + gamma(3, u32) * (c * c + 2 * eta * s3 * c + 3 * eta * eta);
    return 1.01 * (e32 + 64 * u64);
  }
};

// Builds the guard bands for the key edges of a binning (or of a range: two edges).
template <class Model>
GuardBands make_guard_bands(const KeyEdges& edges, const Model& m) {
  using namespace fast_detail;
  GuardBands g;
  g.nbins = edges.nbins;
  g.steps = edges.steps;
  g.lo.assign(edges.nbins + 1, 0.0f);
  g.hi.assign(edges.nbins + 1, 0.0f);
  // bound(d) is a quadratic C + A d + B d² (η is linear in d), so d² − bound(d) increases from
  // d* = A / (2(1 − B)) on; a pair at or above an edge below d* is only known to have a proxy of
  // at least K − bound(d*).
  const double s = std::max(1.0, m.d_of_proxy(m.proxy_of_key(edges.padded[edges.nbins])));
  const double c0 = m.bound(0.0), c1 = m.bound(s), c2 = m.bound(2 * s);
  const double B = (c2 - 2 * c1 + c0) / (2 * s * s), A = (c1 - c0) / s - B * s;
  const double d_star = B < 1 ? 1.01 * std::max(0.0, A) / (2 * (1 - B)) : std::numeric_limits<double>::infinity();
  for (int k = 0; k <= edges.nbins; ++k) {
    const double p = m.proxy_of_key(edges.padded[k]);
    const double d = m.d_of_proxy(p);
    g.lo[k] = round_down(p - m.bound(std::max(d, d_star)));
    g.hi[k] = round_up(p + m.bound(d));
  }
  // Bands of neighbouring edges may overlap when bins are narrower than the float32 resolution;
  // classify_proxy still only certifies a bin between H_k and L_{k+1}. Keep L monotone for the search.
  for (int k = 1; k <= edges.nbins; ++k) g.lo[k] = std::max(g.lo[k], g.lo[k - 1]);
  return g;
}

// A faster classifier for many bins: a table indexed by the float's bit pattern (monotone in the
// value for non-negative floats, and logarithmic, so it resolves small and large separations
// alike) gives a bin at or below the answer; a short walk up the bands finds the bin, and one more
// comparison checks the band. On a GPU that is two or three shared-memory loads per pair instead
// of one per binary-search step.
struct alignas(8) BandPair {
  float hi;       // H_k: at or above it the pair is certainly at or above edge k
  float lo_next;  // L_{k+1}: below it the pair is certainly below edge k+1 (+inf after the last)
};

// Each cell of the table holds the bin at or below its start; a cell that lies wholly inside one
// bin's certain range [H_k, L_{k+1}), or wholly outside the bins, says so in the entry itself
// (kCertain): a single shared load then decides the pair (direct_lookup), and only pairs in the
// few cells that hold a band walk the bands (classify_table). Outside is bin nbins.
constexpr std::uint16_t kUncertain = 0x8000;
constexpr int kMaxTableBins = 0x7ffe;

struct GuardTable {
  std::vector<BandPair> bands;  // nbins + 1
  std::vector<std::uint16_t> cells;
  float lo0 = 0;
  std::uint32_t base_bits = 0;
  std::uint32_t top_bits = 0;  // bits of the last value of the last cell (direct_lookup clamps to it)
  int shift = 0;
  int nbins = 0;
};

TWOBODY_HD std::uint32_t float_bits(float x) {
#if defined(__CUDA_ARCH__)
  return __float_as_uint(x);
#else
  std::uint32_t u;
  std::memcpy(&u, &x, sizeof u);
  return u;
#endif
}

// Same contract as classify_proxy. `ncells` must be the table's size.
TWOBODY_HD int classify_table(const BandPair* bands, const std::uint16_t* cells, int ncells, float lo0,
                              std::uint32_t base_bits, int shift, int nbins, float s) {
  if (!(s >= lo0)) return -1;
  const std::uint32_t u = float_bits(s);
  int k = 0;
  if (u >= base_bits) {
    const std::uint32_t c = (u - base_bits) >> shift;
    k = cells[c < static_cast<std::uint32_t>(ncells) ? c : ncells - 1] & (kUncertain - 1);
  }
  BandPair b = bands[k];
  while (s >= b.lo_next) b = bands[++k];
  if (s < b.hi) return -2;
  return k < nbins ? k : -1;
}

// The table's entry for a proxy: the bin (nbins: outside) when the entry is certain, else an
// entry with kUncertain set (classify_table decides). Values below the table clamp into its first
// cell and values above into its last, whose entries account for that.
TWOBODY_HD std::uint32_t direct_lookup(const std::uint16_t* cells, std::uint32_t base_bits, std::uint32_t top_bits,
                                       int shift, float s) {
  const std::int32_t u = static_cast<std::int32_t>(float_bits(s));  // negative floats: below the table
  const std::int32_t lo = static_cast<std::int32_t>(base_bits), hi = static_cast<std::int32_t>(top_bits);
  const std::int32_t v = u < lo ? lo : (u > hi ? hi : u);
  return cells[static_cast<std::uint32_t>(v - lo) >> shift];
}

// Cells: a power of two, about four per bin, at least 256 and at most max_cells (<= 65536).
// `min_cells`: a finer table leaves fewer pairs in its uncertain cells (each cell that holds a
// band sends every pair in it to the band walk), at the price of its memory.
inline GuardTable make_guard_table(const GuardBands& g, int max_cells, int min_cells = 256) {
  GuardTable t;
  t.nbins = g.nbins;
  t.lo0 = g.lo[0];
  t.bands.resize(g.nbins + 1);
  for (int k = 0; k <= g.nbins; ++k)
    t.bands[k] = {g.hi[k], k < g.nbins ? g.lo[k + 1] : std::numeric_limits<float>::infinity()};
  // The table starts below the first band when the bins start above zero, so that the pairs
  // closer than the first edge clamp into a cell that is certainly outside.
  const float base = g.lo[0] > 0 ? g.lo[0] * 0.5f : std::max(g.lo[1], std::numeric_limits<float>::min());
  t.base_bits = float_bits(base);
  // The last cell must start above H_nbins, so that everything clamped into it is certainly out.
  const float top = std::max({g.lo[g.nbins], g.hi[g.nbins], base});
  const std::uint32_t range = float_bits(top) - t.base_bits;
  int ncells = 256;
  while ((ncells < 64 * g.nbins || ncells < min_cells) && ncells < max_cells) ncells *= 2;
  while (t.shift < 31 && (static_cast<std::uint64_t>(range) >> t.shift) >= static_cast<std::uint64_t>(ncells - 1)) ++t.shift;
  t.top_bits = static_cast<std::uint32_t>(
      std::min<std::uint64_t>(static_cast<std::uint64_t>(t.base_bits) + (static_cast<std::uint64_t>(ncells) << t.shift) - 1,
                              0x7f7fffffu));
  t.cells.resize(ncells);
  const auto value_at = [&](std::uint64_t bits) {
    float f;
    const std::uint32_t b32 = static_cast<std::uint32_t>(std::min<std::uint64_t>(bits, 0x7f7fffffu));
    std::memcpy(&f, &b32, sizeof f);
    return f;
  };
  const float inf = std::numeric_limits<float>::infinity();
  int k = 0;
  for (int c = 0; c < ncells; ++c) {
    const std::uint64_t bits = static_cast<std::uint64_t>(t.base_bits) + (static_cast<std::uint64_t>(c) << t.shift);
    const float start = value_at(bits);
    while (k < g.nbins && g.lo[k + 1] <= start) ++k;
    // The values that land in this cell: [lo, hi) (the first and last cells take the clamped ones).
    const float lo = c == 0 ? -inf : start;
    const float hi = c == ncells - 1 ? inf : value_at(bits + (std::uint64_t(1) << t.shift));
    std::uint16_t entry = static_cast<std::uint16_t>(k) | kUncertain;
    if (hi <= g.lo[0]) entry = static_cast<std::uint16_t>(g.nbins);  // below every bin
    else if (k == g.nbins && lo >= g.hi[g.nbins]) entry = static_cast<std::uint16_t>(g.nbins);  // above
    else if (k < g.nbins && lo >= g.lo[k] && lo >= g.hi[k] && hi <= g.lo[k + 1]) entry = static_cast<std::uint16_t>(k);
    t.cells[c] = entry;
  }
  return t;
}

}  // namespace twobody
