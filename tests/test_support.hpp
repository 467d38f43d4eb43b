#pragma once
// Fresh random inputs for every run: the seed comes from the clock and is printed with any failure.
#include <gtest/gtest.h>

#include <chrono>
#include <cstdlib>
#include <random>
#include <string>

#include "oracle/brute_force.hpp"
#include "twobody/box.hpp"
#include "twobody/engine.hpp"
#include "twobody/error.hpp"
#include "twobody/points.hpp"
#include "twobody/statistic.hpp"

namespace testing_support {

// Expects f() to throw an Error of `kind` whose message contains `needle`.
inline void expect_error(twobody::ErrorKind kind, const std::string& needle, auto&& f) {
  try {
    f();
    ADD_FAILURE() << "expected an error containing '" << needle << "'";
  } catch (const twobody::Error& e) {
    EXPECT_EQ(e.kind(), kind) << e.what();
    EXPECT_NE(std::string(e.what()).find(needle), std::string::npos) << e.what();
  }
}

// Run options that ask for one backend ("cpu", "cuda").
inline twobody::RunOptions on(const char* backend) {
  twobody::RunOptions o;
  o.backend = backend;
  return o;
}

// An environment variable set for the scope (the tuning policies read theirs at every run).
struct ScopedEnv {
  ScopedEnv(const char* n, const char* value) : name(n) { setenv(n, value, 1); }
  ~ScopedEnv() { unsetenv(name); }
  ScopedEnv(const ScopedEnv&) = delete;
  ScopedEnv& operator=(const ScopedEnv&) = delete;
  const char* name;
};

// TWOBODY_TEST_SEED=S replays a failure: run the one test alone with the seed its trace printed
// (that test's first fresh_seed() is then S).
inline std::uint64_t fresh_seed() {
  static const std::uint64_t base = std::getenv("TWOBODY_TEST_SEED")
                                        ? std::strtoull(std::getenv("TWOBODY_TEST_SEED"), nullptr, 10)
                                        : static_cast<std::uint64_t>(
                                              std::chrono::high_resolution_clock::now().time_since_epoch().count());
  static std::uint64_t k = 0;
  return base + 7919 * (k++);
}

// A 3-D lattice of spacing ½ (nx x ny x nz points): most pairs lie exactly on edges at multiples
// of ½, the fast paths' hardest case.
inline oracle::Points half_lattice(int nx, int ny, int nz) {
  oracle::Points p;
  p.dim = 3;
  for (int x = 0; x < nx; ++x)
    for (int y = 0; y < ny; ++y)
      for (int z = 0; z < nz; ++z) p.x.push_back({0.5 * x, 0.5 * y, 0.5 * z});
  return p;
}

// Random weights in [lo, hi) for every point (the weighted variants of the tests).
inline twobody::PointSet with_weights(twobody::PointSet p, std::mt19937_64& rng, double lo = 0.5, double hi = 1.5) {
  std::uniform_real_distribution<double> u(lo, hi);
  std::vector<double> w(p.size());
  for (auto& x : w) x = u(rng);
  p.set_weights(std::move(w));
  return p;
}
inline twobody::PointSet with_weights(twobody::PointSet p, std::uint64_t seed, double lo = 0.5, double hi = 1.5) {
  std::mt19937_64 rng(seed);
  return with_weights(std::move(p), rng, lo, hi);
}

inline twobody::PointSet to_pointset(const oracle::Points& p) {
  twobody::PointSet s(p.dim, p.x.size());
  for (std::size_t i = 0; i < p.x.size(); ++i)
    for (int d = 0; d < p.dim; ++d) s.coord(d)[i] = p.x[i][d];
  if (!p.w.empty()) s.set_weights(p.w);
  return s;
}

// to_pointset's inverse: a point set (weights too) for the float64 brute force.
inline oracle::Points to_oracle(const twobody::PointSet& p) {
  oracle::Points o;
  o.dim = p.dim();
  for (std::size_t i = 0; i < p.size(); ++i) {
    std::vector<double> x(p.dim());
    for (int d = 0; d < p.dim(); ++d) x[d] = p.coord(d)[i];
    o.x.push_back(x);
  }
  if (p.has_weights()) o.w.assign(p.weights().begin(), p.weights().end());
  return o;
}

inline oracle::Points uniform_points(std::size_t n, int dim, double lo, double hi, std::mt19937_64& rng,
                                     bool weights = false) {
  std::uniform_real_distribution<double> u(lo, hi), uw(0.5, 2.0);
  oracle::Points p;
  p.dim = dim;
  for (std::size_t i = 0; i < n; ++i) {
    std::vector<double> x(dim);
    for (auto& v : x) v = u(rng);
    p.x.push_back(x);
    if (weights) p.w.push_back(uw(rng));
  }
  return p;
}

inline oracle::Points sky_points(std::size_t n, std::mt19937_64& rng, double dec_lo = -90, double dec_hi = 90) {
  std::uniform_real_distribution<double> ura(0, 360), uz(std::sin(dec_lo * M_PI / 180), std::sin(dec_hi * M_PI / 180));
  oracle::Points p;
  p.dim = 2;
  for (std::size_t i = 0; i < n; ++i) p.x.push_back({ura(rng), std::asin(uz(rng)) * 180 / M_PI});
  return p;
}

// The points of p whose label differs from r, weights kept: a catalogue without jackknife region
// r, for leave-one-region-out recounts.
inline twobody::PointSet without_region(const twobody::PointSet& p, const std::vector<std::int32_t>& labels, int r) {
  std::vector<std::size_t> keep;
  for (std::size_t i = 0; i < p.size(); ++i)
    if (labels[i] != r) keep.push_back(i);
  twobody::PointSet q(p.dim(), keep.size());
  for (int d = 0; d < p.dim(); ++d)
    for (std::size_t t = 0; t < keep.size(); ++t) q.coord(d)[t] = p.coord(d)[keep[t]];
  if (p.has_weights()) {
    std::vector<double> w;
    for (std::size_t i : keep) w.push_back(p.weights()[i]);
    q.set_weights(std::move(w));
  }
  return q;
}

// The reduction of an output kind over 1-D bins (a Histogram of `b`, without jackknife regions or
// mean separations), or over the range [b.lo(), b.hi()) (Count, PairList, PerPoint): for tests
// that pick the output as a parameter.
inline twobody::Reduction reduction_of(twobody::OutputKind out, const twobody::Binning& b) {
  namespace reduce = twobody::reduce;
  switch (out) {
    case twobody::OutputKind::Reduction: return reduce::Count{b};
    case twobody::OutputKind::Histogram: return reduce::Histogram{b};
    case twobody::OutputKind::PairList: return reduce::PairList{b};
    case twobody::OutputKind::PerPoint: return reduce::PerPoint{b};
    case twobody::OutputKind::Matrix: return reduce::Matrix{};
    case twobody::OutputKind::Nearest: return reduce::Nearest{1};
  }
  ADD_FAILURE() << "unknown output kind";
  return reduce::Histogram{b};
}

// New 1-D bins for a Histogram (its jackknife regions and mean separation kept), or a new range
// for a Count, PairList or PerPoint: what assigning the old Statistic::binning did.
inline void set_binning(twobody::Statistic& s, const twobody::Binning& b) {
  namespace reduce = twobody::reduce;
  if (auto* h = std::get_if<reduce::Histogram>(&s.reduction)) h->bins = b;
  else if (auto* c = std::get_if<reduce::Count>(&s.reduction)) c->range = b;
  else if (auto* l = std::get_if<reduce::PairList>(&s.reduction)) l->range = b;
  else if (auto* p = std::get_if<reduce::PerPoint>(&s.reduction)) p->range = b;
  else ADD_FAILURE() << "set_binning on a " << twobody::to_string(s.output()) << (s.is_2d() ? " of 2-D bins" : "");
}

// `f()` throws twobody::Error of kind Config, its message containing `needle`.
template <class F>
void expect_config_error(F&& f, const std::string& needle) {
  try {
    f();
    ADD_FAILURE() << "no error; expected a Config error mentioning \"" << needle << '"';
  } catch (const twobody::Error& e) {
    EXPECT_EQ(e.kind(), twobody::ErrorKind::Config) << e.what();
    EXPECT_NE(std::string(e.what()).find(needle), std::string::npos) << e.what();
  }
}

// n points uniform in a triclinic cell (uniform fractional coordinates), kept only where the
// planner's own test puts them inside (x = f·H may round a hair across a face); with weights
// uniform in [0.5, 2), drawn point by point.
inline twobody::PointSet points_in_cell(const twobody::Box& box, std::size_t n, std::mt19937_64& rng,
                                        bool weights = false) {
  std::uniform_real_distribution<double> u(0.0, 1.0), uw(0.5, 2.0);
  twobody::PointSet p(3, n);
  std::vector<double> w;
  for (std::size_t i = 0; i < n;) {
    const double fa = u(rng), fb = u(rng), fc = u(rng);
    const double x = fa * box.length[0] + fb * box.xy + fc * box.xz, y = fb * box.length[1] + fc * box.yz,
                 z = fc * box.length[2];
    const auto f = box.cell_coordinates(x, y, z);
    if (!(f[0] >= 0 && f[0] < 1 && f[1] >= 0 && f[1] < 1 && f[2] >= 0 && f[2] < 1)) continue;
    p.coord(0)[i] = x;
    p.coord(1)[i] = y;
    p.coord(2)[i] = z;
    if (weights) w.push_back(uw(rng));
    ++i;
  }
  if (weights) p.set_weights(std::move(w));
  return p;
}

}  // namespace testing_support
