// The CUDA counting tiles' exactness argument, checked on the CPU with the kernel's own float32
// arithmetic (fmaf and float adds are correctly rounded on both; sqrt.approx is replaced by sqrtf
// pushed to either end of its assumed error): whenever a verdict is certain it is the float64 one.
// And seed 000's copies model (equations 1–5) on known cases.
#include <gtest/gtest.h>

#include <algorithm>
#include <array>
#include <bit>
#include <cmath>
#include <random>
#include <vector>

#include "test_support.hpp"
#include "twobody/detail/exact/counting_bounds.hpp"
#include "twobody/detail/cuda/copies_model.hpp"
#include "twobody/detail/exact/fast_proxies.hpp"
#include "twobody/statistics.hpp"

using namespace twobody;
using testing_support::fresh_seed;
using testing_support::to_pointset;
using testing_support::uniform_points;

namespace {

struct Shifted {
  std::vector<std::array<float, 3>> f;
  FastSetup<Euclidean<3>> setup;
};

Shifted shifted(const PointSet& p) {
  Shifted s;
  s.setup = make_fast_setup(Euclidean<3>{}, p, p);
  for (std::size_t i = 0; i < p.size(); ++i)
    s.f.push_back({static_cast<float>(p.coord(0)[i] - s.setup.shift[0]), static_cast<float>(p.coord(1)[i] - s.setup.shift[1]),
                   static_cast<float>(p.coord(2)[i] - s.setup.shift[2])});
  return s;
}

double key64(const PointSet& p, std::size_t i, std::size_t j) {
  double a[3], b[3];
  for (int d = 0; d < 3; ++d) {
    a[d] = p.coord(d)[i];
    b[d] = p.coord(d)[j];
  }
  return Euclidean<3>{}.key(a, b);
}

// A sign-bit count's verdicts for [lo, hi) under plan cp, s' of pair (i, j) from value(i, j):
// wherever s' (and s'_lo) lies outside its band the verdict must be float64's; returns the pairs
// left to settle.
template <class Value>
std::size_t check_sign_verdicts(const PointSet& p, const CountingPlan& cp, const char* form, Value value) {
  EXPECT_TRUE(cp.usable) << cp.why;
  const float band_hi = fast_detail::round_up(cp.band_hi), band_lo = fast_detail::round_up(cp.band_lo);
  const float t_diff = static_cast<float>(cp.t_hi - cp.t_lo);
  std::size_t unsure = 0;
  for (std::size_t i = 0; i < p.size(); ++i)
    for (std::size_t j = i + 1; j < p.size(); ++j) {
      const float v = value(i, j);
      const float vl = v + t_diff;
      const double k = key64(p, i, j);
      const bool in = k >= cp.t_lo && k < cp.t_hi;
      if (std::abs(v) <= band_hi || (cp.has_lo && std::abs(vl) <= band_lo)) {
        ++unsure;
        continue;
      }
      const bool fast = (v < 0) && !(cp.has_lo && vl < 0);
      if (fast != in) {
        ADD_FAILURE() << "pair " << i << "," << j << ": " << form << " sign verdict " << fast << ", float64 " << in
                      << " (key " << k << ")";
        return unsure;
      }
    }
  return unsure;
}

// The kernel's count arithmetic for [lo, hi) (−2a and |a|² − T per anchor, |b|² per partner, one
// add and three FMAs).
std::size_t check_count(const PointSet& p, double lo, double hi) {
  const Shifted s = shifted(p);
  const CountingPlan cp = gram_count_plan(s.setup.model, lo, hi);
  std::vector<std::array<float, 3>> a(p.size());
  std::vector<float> ca(p.size()), nb(p.size());
  for (std::size_t i = 0; i < p.size(); ++i) {
    double n2 = 0;
    for (int d = 0; d < 3; ++d) {
      n2 += double(s.f[i][d]) * s.f[i][d];
      a[i][d] = -2.f * s.f[i][d];
    }
    ca[i] = static_cast<float>(n2 - cp.t_hi);
    nb[i] = static_cast<float>(n2);
  }
  return check_sign_verdicts(p, cp, "Gram", [&](std::size_t i, std::size_t j) {
    float v = ca[i] + nb[j];
    for (int d = 0; d < 3; ++d) v = std::fmaf(a[i][d], s.f[j][d], v);
    return v;
  });
}

// The tensor-core count's arithmetic (tensor_count_tiles.cuh) under the accumulation model its
// bound assumes: TF32 splits rounded to nearest (ties away), products exact, each MMA's addends
// truncated to 22 bits below the largest and the sum rounded toward zero. Certain verdicts must
// be float64's; returns the pairs left to settle.
float tf32(float x) { return std::bit_cast<float>((std::bit_cast<std::uint32_t>(x) + 0x1000u) & 0xffffe000u); }
float mma_model(const std::vector<double>& addends) {
  double largest = 0;
  for (double t : addends) largest = std::max(largest, std::abs(t));
  if (largest == 0) return 0.f;
  int e;
  std::frexp(largest, &e);
  const double q = std::ldexp(1.0, e - 22);
  double sum = 0;
  for (double t : addends) sum += std::trunc(t / q) * q;
  float r = static_cast<float>(sum);
  if (std::abs(double(r)) > std::abs(sum)) r = std::nextafter(r, 0.f);
  return r;
}
// A point's TF32 splits (coordinates, and the norm term c: |a|² − T or |b|²), as the kernels make them.
struct TensorSplit {
  float h[3], l[3], ch, cl;
};
TensorSplit tensor_split(const float* x, float c) {
  TensorSplit q;
  for (int d = 0; d < 3; ++d) {
    q.h[d] = tf32(x[d]);
    q.l[d] = tf32(x[d] - q.h[d]);
  }
  q.ch = tf32(c);
  q.cl = tf32(c - q.ch);
  return q;
}
// The kernels' two MMAs on anchor a and partner b under the accumulation model.
float tensor_gram_model(const TensorSplit& a, const TensorSplit& b) {
  std::vector<double> t1, t2;
  for (int d = 0; d < 3; ++d) t1.push_back(-2.0 * a.h[d] * b.h[d]);
  for (int d = 0; d < 3; ++d) t1.push_back(-2.0 * a.l[d] * b.h[d]);
  t1.push_back(a.ch);
  t1.push_back(a.cl);
  t1.push_back(0.0);  // the accumulator
  const float r1 = mma_model(t1);
  for (int d = 0; d < 3; ++d) t2.push_back(-2.0 * a.h[d] * b.l[d]);
  t2.push_back(b.ch);
  t2.push_back(b.cl);
  t2.push_back(r1);
  return mma_model(t2);
}

std::size_t check_tensor_count(const PointSet& p, double lo, double hi) {
  const Shifted s = shifted(p);
  const CountingPlan cp = tensor_count_plan(s.setup.model, lo, hi);
  std::vector<TensorSplit> sa, sb;  // anchors with |a|² − T, partners with |b|²
  for (std::size_t i = 0; i < p.size(); ++i) {
    double n2 = 0;
    for (int d = 0; d < 3; ++d) n2 += double(s.f[i][d]) * s.f[i][d];
    sa.push_back(tensor_split(s.f[i].data(), static_cast<float>(n2 - cp.t_hi)));
    sb.push_back(tensor_split(s.f[i].data(), static_cast<float>(n2)));
  }
  return check_sign_verdicts(p, cp, "tensor", [&](std::size_t i, std::size_t j) { return tensor_gram_model(sa[i], sb[j]); });
}

// The half-precision form (tensor_count_tiles.cuh, HalfGram) under the same accumulation model:
// coordinates scaled by σ, FP16 splits rounded to nearest even (subnormals below 2^-14 on a grid
// of 2^-24), the thirteen products exact in one MMA; values compared in original units (÷σ²).
float fp16(float x) {
  if (x == 0.f || !std::isfinite(x)) return x;
  int e;
  std::frexp(x, &e);                              // |x| in [2^(e−1), 2^e)
  const double q = std::ldexp(1.0, std::max(e - 1, -14) - 10);  // the spacing of FP16 there
  return static_cast<float>(std::nearbyint(double(x) / q) * q);
}
struct HalfSplit {
  float h[3], l[3], ch, cl;
};
HalfSplit half_split(const float* x, float c) {
  HalfSplit q;
  for (int d = 0; d < 3; ++d) {
    q.h[d] = fp16(x[d]);
    q.l[d] = fp16(x[d] - q.h[d]);
  }
  q.ch = fp16(c);
  q.cl = fp16(c - q.ch);
  return q;
}
std::size_t check_tensor_half_count(const PointSet& p, double lo, double hi) {
  const Shifted s = shifted(p);
  const CountingPlan cp = tensor_half_count_plan(s.setup.model, lo, hi);
  const double sigma = tensor_half_scale(s.setup.model.M);
  std::vector<HalfSplit> sa, sb;
  for (std::size_t i = 0; i < p.size(); ++i) {
    float x[3];
    double n2 = 0;
    for (int d = 0; d < 3; ++d) {
      x[d] = static_cast<float>(s.f[i][d] * sigma);
      n2 += double(x[d]) * x[d];
    }
    sa.push_back(half_split(x, static_cast<float>(n2 - cp.t_hi * sigma * sigma)));
    sb.push_back(half_split(x, static_cast<float>(n2)));
  }
  return check_sign_verdicts(p, cp, "half tensor", [&](std::size_t i, std::size_t j) {
    const HalfSplit &a = sa[i], &b = sb[j];
    std::vector<double> t;
    for (int d = 0; d < 3; ++d) {
      t.push_back(-2.0 * a.h[d] * b.h[d]);
      t.push_back(-2.0 * a.h[d] * b.l[d]);
      t.push_back(-2.0 * a.l[d] * b.h[d]);
    }
    t.push_back(a.ch);
    t.push_back(a.cl);
    t.push_back(b.ch);
    t.push_back(b.cl);
    t.push_back(0.0);  // the accumulator
    return static_cast<float>(double(mma_model(t)) / (sigma * sigma));
  });
}

// The kernels' histogram arithmetic (equal-width bins, counting_tiles.cuh and
// fp64_tensor_histogram_tiles.cuh) from the float32 d² of pair (i, j) that sq_of gives: whenever
// the guard's two fixed-point positions agree above bit F, ⌊q⌋ must be float64's bin (outside:
// below 0 or at nbins), for sqrt.approx at either end of its error.
template <class SquaredDistance>
std::size_t check_equal_width(const PointSet& p, const Binning& bins, const CountingPlan& cp, const SquaredDistance& sq_of) {
  const auto& edges = bins.edges();
  EXPECT_TRUE(cp.usable) << cp.why;
  const KeyEdges keys = KeyEdges::make(bins, Euclidean<3>{});
  const float iw = static_cast<float>(cp.inv_width), lo = static_cast<float>(edges.front());
  const float dmin = static_cast<float>(cp.d_min), dmax = static_cast<float>(cp.d_max);
  const int F = cp.guard.frac_bits;
  const float gscale = std::ldexp(iw, F);
  const float glo = static_cast<float>(0x1p23 + std::ldexp(1.0, F) - cp.guard.margin);
  const float ghi = static_cast<float>(0x1p23 + std::ldexp(1.0, F) + cp.guard.margin);
  const std::uint32_t limit = 1u << F;
  const int n = static_cast<int>(bins.nbins());
  std::size_t unsure = 0;
  for (std::size_t i = 0; i < p.size(); ++i)
    for (std::size_t j = i + 1; j < p.size(); ++j) {
      const float sq = sq_of(i, j);
      const int exact = find_bin(keys.padded.data(), keys.nbins, keys.steps, key64(p, i, j));
      for (double e : {-1.0, 1.0}) {
        float d = static_cast<float>(std::sqrt(double(sq)) * (1 + e * kSqrtApproxError));
        d = std::min(std::max(d - lo, dmin), dmax);
        const std::uint32_t guard = std::bit_cast<std::uint32_t>(std::fmaf(d, gscale, glo)) ^
                                    std::bit_cast<std::uint32_t>(std::fmaf(d, gscale, ghi));
        if (guard >= limit) {
          unsure += e > 0;
          continue;
        }
        // fma_rd(d, 1/w, magic) − magic: ⌊d·(1/w)⌋, the product exact in double.
        int k = static_cast<int>(std::floor(double(d) * double(iw)));
        if (k < 0 || k >= n) k = -1;
        if (k != exact) {
          ADD_FAILURE() << "pair " << i << "," << j << ": rounded bin " << k << ", float64 " << exact << " (d² " << sq << ")";
          return unsure;
        }
      }
    }
  return unsure;
}
// The counting tiles: d² from differences in float32.
std::size_t check_histogram(const PointSet& p, const Binning& bins) {
  const Shifted s = shifted(p);
  return check_equal_width(p, bins, equal_width_plan(s.setup.model, bins.edges()), [&](std::size_t i, std::size_t j) {
    float sq = 0;
    for (int d = 0; d < 3; ++d) {
      const float dx = s.f[i][d] - s.f[j][d];
      sq = std::fmaf(dx, dx, sq);
    }
    return sq;
  });
}
// The FP64 tensor cores: d² in the float64 Gram form of the scaled float32 coordinates (flushed
// below 2^-100), |b|² first as the MMA's accumulator, truncated to float32 as the funnel shift
// does (the mantissa's top 23 bits), back in original units (÷σ², exact).
std::size_t check_fp64_tensor_histogram(const PointSet& p, const Binning& bins) {
  const Shifted s = shifted(p);
  const double sigma = fp64_tensor_scale(s.setup.model, bins.edges());
  std::vector<std::array<double, 4>> x;  // scaled coordinates and |x|²
  for (const auto& f : s.f) {
    std::array<double, 4> y{};
    for (int d = 0; d < 3; ++d) {
      const float v = static_cast<float>(f[d] * sigma);
      y[d] = std::abs(v) < 0x1p-100f ? 0.0 : v;
      y[3] = std::fma(y[d], y[d], y[3]);
    }
    x.push_back(y);
  }
  return check_equal_width(p, bins, fp64_tensor_histogram_plan(s.setup.model, bins.edges()), [&](std::size_t i, std::size_t j) {
    double g = x[j][3];
    for (int d = 0; d < 3; ++d) g = std::fma(-2.0 * x[i][d], x[j][d], g);
    g += x[i][3];
    EXPECT_LT(std::abs(g), 1.0);
    // The kernel's funnel shift: bits 60..29 as a float, its sign dropped; s·2^128.
    const auto bits = std::bit_cast<std::uint64_t>(g);
    const float f = std::abs(std::bit_cast<float>(static_cast<std::uint32_t>(bits >> 29)));
    EXPECT_TRUE(g == 0 || f == static_cast<float>(std::ldexp(std::bit_cast<double>(std::bit_cast<std::uint64_t>(std::abs(g)) &
                                                                                    ~((std::uint64_t(1) << 29) - 1)),
                                                               128)))
        << g;
    return std::ldexp(f, -128) / static_cast<float>(sigma * sigma);
  });
}

// `n` pairs a, a + r(1 + ε)·u with a uniform in offset + [0.3, 0.7)³, |ε| ≤ 1e-6 and u a random
// direction: pairs within float32 rounding of the edge r.
oracle::Points pairs_at_edge(std::mt19937_64& rng, int n, double r, double offset) {
  std::uniform_real_distribution<double> unit(0.0, 1.0), eps(-1e-6, 1e-6);
  std::normal_distribution<double> gauss;
  oracle::Points p;
  p.dim = 3;
  for (int k = 0; k < n; ++k) {
    std::array<double, 3> a, u;
    double norm = 0;
    for (int d = 0; d < 3; ++d) {
      a[d] = offset + 0.3 + 0.4 * unit(rng);
      u[d] = gauss(rng);
      norm += u[d] * u[d];
    }
    const double len = r * (1 + eps(rng)) / std::sqrt(norm);
    p.x.push_back({a[0], a[1], a[2]});
    p.x.push_back({a[0] + len * u[0], a[1] + len * u[1], a[2] + len * u[2]});
  }
  return p;
}

}  // namespace

TEST(CountingBounds, GramSignCountIsExactOnRandomAndOffsetData) {
  const auto seed = fresh_seed();
  SCOPED_TRACE("seed " + std::to_string(seed));
  std::mt19937_64 rng(seed);
  for (double offset : {0.0, -3.0, 1e4}) {
    const auto p = to_pointset(uniform_points(1500, 3, offset, offset + 1.0, rng));
    const std::size_t pairs = p.size() * (p.size() - 1) / 2;
    EXPECT_LT(check_count(p, 0.0, 0.1), pairs / 1000);
    EXPECT_LT(check_count(p, 0.05, 0.3), pairs / 1000);
  }
}

// Points in pairs a, a + r(1 + ε)·u with |ε| ≤ 1e-6 and u a random direction: a thousand pairs
// within float32 rounding of the edge r, where only the band keeps the verdict exact.
TEST(CountingBounds, GramSignCountOnPairsAtTheEdge) {
  const auto seed = fresh_seed();
  SCOPED_TRACE("seed " + std::to_string(seed));
  std::mt19937_64 rng(seed);
  for (double offset : {0.0, 1e4}) {
    for (double r : {0.1, 0.3}) {
      const auto P = to_pointset(pairs_at_edge(rng, 1000, r, offset));
      EXPECT_GT(check_count(P, 0.0, r), 100u);
      EXPECT_GT(check_count(P, r, 0.5), 100u);
    }
  }
}

// The tensor-core form: random and offset data, pairs constructed at the edge, and a lattice
// with pairs exactly on it; its band is wider than the CUDA-core form's, still a small fraction.
TEST(CountingBounds, TensorGramSignCountIsExact) {
  const auto seed = fresh_seed();
  SCOPED_TRACE("seed " + std::to_string(seed));
  std::mt19937_64 rng(seed);
  for (double offset : {0.0, -3.0, 1e4}) {
    const auto p = to_pointset(uniform_points(700, 3, offset, offset + 1.0, rng));
    const std::size_t pairs = p.size() * (p.size() - 1) / 2;
    EXPECT_LT(check_tensor_count(p, 0.0, 0.1), pairs / 1000);
    EXPECT_LT(check_tensor_count(p, 0.05, 0.3), pairs / 1000);
  }
  const oracle::Points e = pairs_at_edge(rng, 400, 0.1, 0.0);
  EXPECT_GT(check_tensor_count(to_pointset(e), 0.0, 0.1), 100u);
  const auto l = to_pointset(testing_support::half_lattice(9, 8, 7));
  EXPECT_GT(check_tensor_count(l, 1.0, 2.5), 500u);
  DistanceErrorModel m;
  m.dim = 3;
  m.M = 0.5;
  EXPECT_TRUE(tensor_count_plan(m, 0.0, 0.1).usable);     // the benchmark's r < 0.1 in a unit box
  EXPECT_FALSE(tensor_count_plan(m, 0.0, 0.005).usable);  // a cutoff far below the extent
  EXPECT_GT(tensor_gram_error(m, 0.01), 4 * gram_error(m, 0.01));
}

// The half-precision form on the same inputs, and at a small scale (M ~ 10^-3: scaled by 2^10,
// many lo parts subnormal in FP16) and a large one (10^5).
TEST(CountingBounds, TensorHalfGramSignCountIsExact) {
  const auto seed = fresh_seed();
  SCOPED_TRACE("seed " + std::to_string(seed));
  std::mt19937_64 rng(seed);
  for (double offset : {0.0, -3.0, 1e4}) {
    const auto p = to_pointset(uniform_points(700, 3, offset, offset + 1.0, rng));
    const std::size_t pairs = p.size() * (p.size() - 1) / 2;
    EXPECT_LT(check_tensor_half_count(p, 0.0, 0.1), pairs / 1000);
    EXPECT_LT(check_tensor_half_count(p, 0.05, 0.3), pairs / 1000);
  }
  for (double scale : {1e-3, 1e5}) {
    const auto p = to_pointset(uniform_points(500, 3, 0.0, scale, rng));
    const std::size_t pairs = p.size() * (p.size() - 1) / 2;
    EXPECT_LT(check_tensor_half_count(p, 0.0, 0.2 * scale), pairs / 1000);
  }
  const oracle::Points e = pairs_at_edge(rng, 400, 0.1, 0.0);
  EXPECT_GT(check_tensor_half_count(to_pointset(e), 0.0, 0.1), 100u);
  const auto l = to_pointset(testing_support::half_lattice(9, 8, 7));
  EXPECT_GT(check_tensor_half_count(l, 1.0, 2.5), 500u);
  DistanceErrorModel m;
  m.dim = 3;
  m.M = 0.5;
  EXPECT_TRUE(tensor_half_count_plan(m, 0.0, 0.1).usable);
  EXPECT_FALSE(tensor_half_count_plan(m, 0.0, 0.005).usable);  // a cutoff far below the extent
  EXPECT_FALSE(tensor_half_count_plan(m, 0.0, 100.0).usable);  // σ²r² beyond FP16's range
  EXPECT_TRUE(tensor_count_plan(m, 0.0, 100.0).usable);        // (TF32 takes it)
  EXPECT_DOUBLE_EQ(tensor_half_scale(0.5), 1.0);
  EXPECT_DOUBLE_EQ(tensor_half_scale(1000.0), 1.0 / 1024);
  EXPECT_LT(tensor_half_gram_error(m, 0.01), 1.5 * tensor_gram_error(m, 0.01));
}

// The tensor-core histogram's arithmetic (tensor_histogram_tiles.cuh) under the same accumulation
// model: points in Morton order cut into items of `item` anchors, each taken about its centre with
// the guard of its radius; whenever a pair is outside the guard its slot must be float64's bin,
// for sqrt.approx at either end of its error. Returns the pairs within the guard (settled).
std::size_t check_tensor_histogram(const PointSet& p, const Binning& bins, std::size_t item = 8) {
  const Shifted s = shifted(p);
  const auto& edges = bins.edges();
  const TensorHistogramPlan hp = tensor_histogram_plan(s.setup.model, edges);
  EXPECT_TRUE(hp.usable) << hp.why;
  if (!hp.usable) return 0;
  const KeyEdges keys = KeyEdges::make(bins, Euclidean<3>{});
  const int n = static_cast<int>(bins.nbins()), F = hp.guard.frac_bits;
  const double lo = edges.front(), hi = edges.back(), w = hp.guard.width;
  const float iw = static_cast<float>(hp.inv_width);
  const float magic = static_cast<float>(1.5 * std::ldexp(1.0, 23 - F) + hp.offset);
  const float magic_f = std::bit_cast<float>((150u - static_cast<unsigned>(F)) << 23 | 0x400000u);
  const float s_below = lo > 0 ? static_cast<float>((lo - 0.25 * w) * (lo - 0.25 * w)) : 0.f;
  const float s_above = static_cast<float>((hi + 0.25 * w) * (hi + 0.25 * w));
  const unsigned mask = (1u << F) - 1u;
  // Morton order of the float32 coordinates (10 bits an axis).
  const double M = s.setup.model.M;
  std::vector<std::pair<std::uint32_t, std::size_t>> order;
  for (std::size_t i = 0; i < p.size(); ++i) {
    std::uint32_t key = 0;
    for (int b = 9; b >= 0; --b)
      for (int d = 0; d < 3; ++d) {
        const auto q = static_cast<std::uint32_t>(std::clamp((s.f[i][d] + M) / (2 * M) * 1024, 0.0, 1023.0));
        key = (key << 1) | ((q >> b) & 1u);
      }
    order.push_back({key, i});
  }
  std::sort(order.begin(), order.end());
  auto recentred = [&](std::size_t i, const float (&c)[3]) {
    float x[3];
    double n2 = 0;
    for (int d = 0; d < 3; ++d) {
      x[d] = s.f[i][d] - c[d];
      n2 += double(x[d]) * x[d];
    }
    return tensor_split(x, static_cast<float>(n2));
  };
  std::size_t unsure = 0;
  for (std::size_t i0 = 0; i0 < p.size(); i0 += item) {
    const std::size_t i1 = std::min(p.size(), i0 + item);
    float box[6] = {HUGE_VALF, HUGE_VALF, HUGE_VALF, -HUGE_VALF, -HUGE_VALF, -HUGE_VALF};
    for (std::size_t k = i0; k < i1; ++k)
      for (int d = 0; d < 3; ++d) {
        box[d] = std::min(box[d], s.f[order[k].second][d]);
        box[3 + d] = std::max(box[3 + d], s.f[order[k].second][d]);
      }
    float c[3];
    for (int d = 0; d < 3; ++d) c[d] = 0.5f * (box[d] + box[3 + d]);
    float far = 0;
    for (std::size_t k = i0; k < i1; ++k) {
      double n2 = 0;
      for (int d = 0; d < 3; ++d) {
        const double y = s.f[order[k].second][d] - c[d];
        n2 += y * y;
      }
      far = std::max(far, std::nextafter(static_cast<float>(n2), HUGE_VALF));
    }
    const TensorItemGuard ig = tensor_item_guard(hp.guard, std::sqrt(double(far)));
    const bool all = ig.h < 0;
    const unsigned two_h = all ? mask + 2u : 2u * static_cast<unsigned>(ig.h);
    const float cpos = all ? magic : magic + std::ldexp(static_cast<float>(ig.h), -F);
    const float s_low = ig.clamp_low ? static_cast<float>(ig.edge * ig.edge) : s_below;
    for (std::size_t k = i0; k < i1; ++k) {
      const std::size_t i = order[k].second;
      const TensorSplit a = recentred(i, c);
      for (std::size_t kj = k + 1; kj < p.size(); ++kj) {
        const std::size_t j = order[kj].second;
        const float sq = std::min(std::max(tensor_gram_model(a, recentred(j, c)), s_low), s_above);
        const int exact = find_bin(keys.padded.data(), keys.nbins, keys.steps, key64(p, i, j));
        for (double e : {-1.0, 1.0}) {
          const float d = static_cast<float>(std::sqrt(double(sq)) * (1 + e * kSqrtApproxError));
          const float v = std::fmaf(d, iw, cpos);
          const auto bits = std::bit_cast<std::uint32_t>(v);
          if ((bits & mask) < two_h) {
            unsure += e > 0;
            continue;
          }
          int slot = static_cast<int>(bits >> F) - static_cast<int>(std::bit_cast<std::uint32_t>(magic_f) >> F) + 1;
          const int got = slot >= 1 && slot <= n ? slot - 1 : -1;
          if (got != exact) {
            ADD_FAILURE() << "pair " << i << "," << j << ": slot " << slot << ", float64 bin " << exact << " (s " << sq
                          << ", item radius " << std::sqrt(double(far)) << ", h " << ig.h << ")";
            return unsure;
          }
        }
      }
    }
  }
  return unsure;
}

TEST(CountingBounds, TensorHistogramIsExactOnRandomOffsetAndLatticeData) {
  const auto seed = fresh_seed();
  SCOPED_TRACE("seed " + std::to_string(seed));
  std::mt19937_64 rng(seed);
  for (double offset : {0.0, 1e4}) {
    const auto p = to_pointset(uniform_points(1000, 3, offset, offset + 1.0, rng));
    const std::size_t pairs = p.size() * (p.size() - 1) / 2;
    for (std::size_t nb : {8u, 32u, 256u}) {
      SCOPED_TRACE(nb);
      const std::size_t unsure = check_tensor_histogram(p, Binning::linear(0.0, std::sqrt(3.0) * 1.000001, nb));
      // (1 000 points make items of 8 span ~0.2 of the box, so more pairs are settled than at 2^22
      // points, where items of 512 span ~0.05: 0.2–0.4% there.)
      EXPECT_LT(unsure, pairs / 8);
      EXPECT_GT(unsure, 0u);
    }
    check_tensor_histogram(p, Binning::linear(0.2, 0.9, 70));  // pairs below and beyond the bins
  }
  const oracle::Points l = testing_support::half_lattice(12, 11, 10);
  EXPECT_GT(check_tensor_histogram(to_pointset(l), Binning::linear(0.0, 6.0, 12)), 1000u);
  EXPECT_GT(check_tensor_histogram(to_pointset(l), Binning::linear(1.0, 4.0, 6)), 1000u);
  DistanceErrorModel m;
  m.dim = 3;
  m.M = 0.5;
  EXPECT_TRUE(tensor_histogram_plan(m, Binning::linear(0.0, std::sqrt(3.0), 256).edges()).usable);
  EXPECT_FALSE(tensor_histogram_plan(m, Binning::linear(0.0, std::sqrt(3.0), 8192).edges()).usable);
  EXPECT_FALSE(tensor_histogram_plan(m, Binning::logarithmic(0.1, 1.0, 10).edges()).usable);
  // An item's guard grows with its radius; a huge item settles everything.
  const TensorHistogramPlan hp = tensor_histogram_plan(m, Binning::linear(0.0, std::sqrt(3.0), 256).edges());
  EXPECT_LE(tensor_item_guard(hp.guard, 0.0).h, tensor_item_guard(hp.guard, 0.05).h);
  EXPECT_GT(tensor_item_guard(hp.guard, 0.05).first_edge, 0);
  EXPECT_LT(tensor_item_guard(hp.guard, 0.05).edge, 0.02);
}

// A lattice of spacing 1/2: every range edge at a multiple of 1/2 is met exactly by many pairs,
// all of which must be settled, and every other verdict must stand.
TEST(CountingBounds, GramSignCountOnLatticeEdges) {
  const oracle::Points l = testing_support::half_lattice(12, 11, 10);
  const auto p = to_pointset(l);
  EXPECT_GT(check_count(p, 1.0, 2.5), 1000u);
  EXPECT_GT(check_count(p, 0.0, 1.5), 1000u);
}

TEST(CountingBounds, EqualWidthBinsAreExactOnRandomOffsetAndLatticeData) {
  const auto seed = fresh_seed();
  SCOPED_TRACE("seed " + std::to_string(seed));
  std::mt19937_64 rng(seed);
  for (double offset : {0.0, 1e4}) {
    const auto p = to_pointset(uniform_points(1200, 3, offset, offset + 1.0, rng));
    const std::size_t pairs = p.size() * (p.size() - 1) / 2;
    for (std::size_t nb : {1u, 8u, 256u, 1024u}) {
      SCOPED_TRACE(nb);
      EXPECT_LT(check_histogram(p, Binning::linear(0.0, std::sqrt(3.0) * 1.000001, nb)), pairs / 100);
    }
    check_histogram(p, Binning::linear(0.2, 0.9, 70));  // pairs below and beyond the bins
  }
  const oracle::Points l = testing_support::half_lattice(12, 11, 10);
  EXPECT_GT(check_histogram(to_pointset(l), Binning::linear(0.0, 6.0, 12)), 1000u);
  EXPECT_GT(check_histogram(to_pointset(l), Binning::linear(1.0, 4.0, 6)), 1000u);
}

// The FP64 tensor-core histogram's arithmetic: every verdict outside the guard is float64's, on
// random, offset and edge-laden lattice data, and its guard is as narrow as the counting tiles'
// (within a factor of two: the truncation to float32 and the Gram form's rounding).
TEST(CountingBounds, Fp64TensorHistogramIsExactOnRandomOffsetAndLatticeData) {
  const auto seed = fresh_seed();
  SCOPED_TRACE("seed " + std::to_string(seed));
  std::mt19937_64 rng(seed);
  for (double offset : {0.0, -3.0, 1e4}) {
    const auto p = to_pointset(uniform_points(1200, 3, offset, offset + 1.0, rng));
    const std::size_t pairs = p.size() * (p.size() - 1) / 2;
    const Shifted s = shifted(p);
    for (std::size_t nb : {1u, 8u, 256u, 1024u}) {
      SCOPED_TRACE(nb);
      const Binning bins = Binning::linear(0.0, std::sqrt(3.0) * 1.000001, nb);
      EXPECT_LT(check_fp64_tensor_histogram(p, bins), pairs / 100);
      EXPECT_LE(fp64_tensor_histogram_plan(s.setup.model, bins.edges()).delta,
                2 * equal_width_plan(s.setup.model, bins.edges()).delta);
    }
    check_fp64_tensor_histogram(p, Binning::linear(0.2, 0.9, 70));  // pairs below and beyond the bins
  }
  // Points a few ulps apart near the centre (flushed coordinates, d² near 2^-246) and far.
  std::vector<std::array<double, 3>> tiny;
  for (int k = 0; k < 200; ++k) tiny.push_back({0.5 + (k % 3) * 1e-39, 0.5 - (k % 5) * 1e-30, 0.5 + k * 1e-9});
  tiny.push_back({0.0, 0.0, 0.0});
  tiny.push_back({1.0, 1.0, 1.0});
  oracle::Points t;
  t.dim = 3;
  for (const auto& q : tiny) t.x.push_back({q[0], q[1], q[2]});
  check_fp64_tensor_histogram(to_pointset(t), Binning::linear(0.0, 2.0, 64));
  const oracle::Points l = testing_support::half_lattice(12, 11, 10);
  EXPECT_GT(check_fp64_tensor_histogram(to_pointset(l), Binning::linear(0.0, 6.0, 12)), 1000u);
  EXPECT_GT(check_fp64_tensor_histogram(to_pointset(l), Binning::linear(1.0, 4.0, 6)), 1000u);
  // σ: a power of two with σ·max(diameter, last edge + w/2) in [1/4, 1/2).
  DistanceErrorModel m;
  m.dim = 3;
  m.M = 0.5;
  const double sigma = fp64_tensor_scale(m, Binning::linear(0.0, std::sqrt(3.0), 256).edges());
  EXPECT_DOUBLE_EQ(sigma, 0.25);
  EXPECT_EQ(fp64_tensor_scale(m, Binning::linear(0.0, 100.0, 10).edges()), 1.0 / 256);
}

// Thousands of bins: δ reaches a few thousandths of a bin (the float32 coordinates' rounding and
// sqrt.approx's error against a bin of 2·10⁻⁴), so ~1% of the pairs are settled, and every other
// verdict stands, on random, offset and edge-laden lattice data.
TEST(CountingBounds, ThousandsOfEqualWidthBins) {
  const auto seed = fresh_seed();
  SCOPED_TRACE("seed " + std::to_string(seed));
  std::mt19937_64 rng(seed);
  for (double offset : {0.0, 1e4}) {
    const auto p = to_pointset(uniform_points(900, 3, offset, offset + 1.0, rng));
    const Shifted s = shifted(p);
    const std::size_t pairs = p.size() * (p.size() - 1) / 2;
    const Binning wide = Binning::linear(0.0, std::sqrt(3.0) * 1.000001, 8192);
    const CountingPlan cp = equal_width_plan(s.setup.model, wide.edges());
    EXPECT_TRUE(cp.usable) << cp.why;
    EXPECT_GT(cp.delta, 1e-3);
    EXPECT_LT(cp.delta, kWidestDelta);
    const std::size_t settled = check_histogram(p, wide);
    EXPECT_LT(settled, pairs / 25);
    EXPECT_GT(settled, pairs / 2000);
    check_histogram(p, Binning::linear(0.3, 0.9, 3000));
  }
  const oracle::Points l = testing_support::half_lattice(12, 11, 10);
  EXPECT_GT(check_histogram(to_pointset(l), Binning::linear(0.0, 6.0, 1200)), 1000u);
}

TEST(CountingBounds, DeclinesWhereTheBoundsAreTooWide) {
  DistanceErrorModel m;
  m.dim = 3;
  m.M = 1000.0;  // a box of side 2000 and a cutoff of 0.1: the Gram form cancels too much
  EXPECT_FALSE(gram_count_plan(m, 0.0, 0.1).usable);
  EXPECT_TRUE(gram_count_plan(m, 0.0, 500.0).usable);
  EXPECT_FALSE(equal_width_plan(m, Binning::logarithmic(0.1, 10.0, 10).edges()).usable);  // not equal width
  EXPECT_FALSE(equal_width_plan(m, Binning::linear(0.0, 1.0, 1000).edges()).usable);     // too narrow
  EXPECT_FALSE(equal_width_plan(m, Binning::linear(0.0, 1e-8, 10).edges()).usable);      // below resolution
  EXPECT_TRUE(equal_width_plan(m, Binning::linear(0.0, 3000.0, 256).edges()).usable);
}

// Seed 000, equations 2–5: one lane per copy never collides; with one slot every extra lane adds
// C_LP; more slots, fewer collisions.
TEST(CopiesModel, CollisionLatency) {
  using cuda::collision_latency;
  EXPECT_DOUBLE_EQ(collision_latency(1, 7.0), 1.0);
  EXPECT_DOUBLE_EQ(collision_latency(32, 1.0), 32.0);
  EXPECT_DOUBLE_EQ(collision_latency(2, 2.0), 1.5);
  for (int k = 2; k <= 32; ++k) {
    EXPECT_GT(collision_latency(k, 10.0), collision_latency(k - 1, 10.0));
    EXPECT_GT(collision_latency(k, 10.0), collision_latency(k, 100.0));
  }
}

// Equation 1 against the shared memory: with few bins every copy fits and 32 win; the seed's
// variant (collisions drawn from the bins) moves to fewer copies as bins grow; and a histogram
// whose 32 copies would not fit gets fewer.
TEST(CopiesModel, ChoiceFollowsBinsAndSharedMemory) {
  cuda::SmLimits h100;  // 132 SMs, 228 KB a multiprocessor, 2048 threads
  auto bytes = [](int nbins) { return [nbins](int h) { return std::size_t(4096 + 4 * (nbins + 2) * h); }; };
  const double T = 1 << 19;
  EXPECT_EQ(cuda::choose_copies(8, h100, 256, 3, bytes(8), T, false).copies, 32);
  EXPECT_EQ(cuda::choose_copies(8, h100, 256, 3, bytes(8), T, true).copies, 32);
  int last = 32;
  for (int nb : {1, 10, 30, 65, 150, 450, 600, 2000}) {
    const int h = cuda::choose_copies(nb, h100, 256, 3, bytes(nb), T, false).copies;
    EXPECT_LE(h, last) << nb;
    last = h;
  }
  EXPECT_LT(cuda::choose_copies(8192, h100, 256, 3, bytes(8192), T, true).copies, 32);
  // The counting tiles' measured penalty: 32 copies while they cost no occupancy, 16 at 600 bins
  // (where the H100 measured 32 copies 21% slower).
  const double p = cuda::kCountingTilesCollisionPenalty;
  EXPECT_EQ(cuda::choose_copies(8 + 2, h100, 256, 3, bytes(8), 512000, true, p).copies, 32);
  EXPECT_EQ(cuda::choose_copies(450 + 2, h100, 256, 3, bytes(450), 512000, true, p).copies, 32);
  EXPECT_EQ(cuda::choose_copies(600 + 2, h100, 256, 3, bytes(600), 512000, true, p).copies, 16);
  const auto c = cuda::choose_copies(30000, h100, 256, 3, bytes(30000), T, true);
  EXPECT_EQ(c.cost[5], HUGE_VAL);  // 32 copies of 30 000 bins do not fit a block
}
