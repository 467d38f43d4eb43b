// Lattice maps against the float64 brute force (every source × every node), closed forms, and
// bit equalities across threads, bin sizes, source order and translations.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstring>
#include <fstream>
#include <cmath>
#include <cstdlib>
#include <numeric>
#include <random>

#include "oracle/lattice_brute_force.hpp"
#include "twobody/detail/engine/lattice_bins.hpp"
#include "twobody/detail/engine/lattice_plan.hpp"
#include "twobody/error.hpp"
#include "twobody/extend/portable_bessel.hpp"
#include "twobody/lattice.hpp"
#include "twobody/lattice_maps.hpp"

#include <fmt/format.h>
#include <nlohmann/json.hpp>
#ifdef TWOBODY_HAVE_HDF5
#include <hdf5.h>
#endif

namespace {

using namespace twobody;
using oracle::LatticeCase;

struct Request {
  PointSet points;
  reduce::OntoLattice stat;
  LatticeSources sources;
};

Request request_of(const LatticeCase& c, Precision precision) {
  Request r;
  r.points = PointSet::from_columns(c.x);
  Lattice& L = r.stat.lattice;
  L.dim = c.dim;
  for (int k = 0; k < 3; ++k) {
    L.origin[k] = c.origin[k];
    L.spacing[k] = c.spacing[k];
    L.shape[k] = c.shape[k];
    L.periodic[k] = c.periodic[k];
  }
  LatticeFunction& f = r.stat.function;
  f.cutoff = c.cutoff;
  switch (c.kind) {
    case LatticeCase::Coulomb:
      f.kind = LatticeKernel::CoulombSwitched;
      f.exclusion = c.exclusion;
      break;
    case LatticeCase::Blinn:
      f.kind = LatticeKernel::BlinnBlob;
      f.blobbiness = c.blobbiness;
      break;
    case LatticeCase::KaiserBesselRadial:
    case LatticeCase::KaiserBesselSeparable:
      f.kind = LatticeKernel::KaiserBessel;
      f.beta = c.beta;
      f.support = c.kind == LatticeCase::KaiserBesselSeparable ? Support::Box : Support::Ball;
      break;
  }
  r.stat.precision = precision;
  return r;
}

// The request's sources: its own points and the case's value columns (once the Request is in place).
void attach_sources(Request& r, const LatticeCase& c) {
  r.sources.points = &r.points;
  r.sources.strength = c.re;
  r.sources.strength_im = c.im;
  r.sources.radius = c.radius;
}

RunOptions on_the_cpu(int threads) {
  RunOptions opt;
  opt.backend = "cpu";
  opt.threads = threads;
  return opt;
}

LatticeMap run_case(const LatticeCase& c, Precision precision, int threads = 0) {
  Request r = request_of(c, precision);
  attach_sources(r, c);
  return run(r.stat, r.sources, on_the_cpu(threads));
}

// Every node within its stated bound of the brute force; the mask and term counts equal.
// Returns the largest error / bound.
double expect_within_bound(const LatticeCase& c, Precision precision) {
  const LatticeMap m = run_case(c, precision);
  const auto ref = oracle::lattice_brute_force(c);
  EXPECT_EQ(m.values.size(), ref.size() * static_cast<std::size_t>(c.im.empty() ? 1 : 2));
  const double last = precision == Precision::Single ? 0x1p-24 : 0x1p-53;
  const double oracle_error = (64 + 4 * c.beta + 8 * c.blobbiness) * 0x1p-53;
  double worst = 0;
  std::uint64_t terms = 0;
  for (std::size_t i = 0; i < ref.size(); ++i) {
    terms += ref[i].terms;
    const bool ex = !m.excluded.empty() && m.excluded[i];
    EXPECT_EQ(ex, ref[i].excluded) << "node " << i;
    for (int part = 0; part < (c.im.empty() ? 1 : 2); ++part) {
      const double want = static_cast<double>(part == 0 ? ref[i].re : ref[i].im);
      const double got = m.values[i * (c.im.empty() ? 1 : 2) + static_cast<std::size_t>(part)];
      const double n = static_cast<double>(ref[i].terms);
      const double bound = n * (m.bound.term + m.bound.step / 2) + last * std::fabs(want) * 1.0000001 +
                           oracle_error * ref[i].abs_sum + 1e-300;
      const double err = std::fabs(got - want);
      EXPECT_LE(err, bound) << "node " << i << " part " << part << ": " << got << " vs " << want << ", " << n << " terms";
      worst = std::max(worst, err / bound);
    }
  }
  EXPECT_EQ(m.terms, terms);
  return worst;
}

LatticeCase random_case(std::uint64_t seed, LatticeCase::Kind kind, std::size_t n, int dim = 3) {
  std::mt19937_64 rng(seed);
  LatticeCase c;
  c.dim = dim;
  c.kind = kind;
  c.origin[0] = -1.25;
  c.origin[1] = 0.5;
  c.origin[2] = 3.0;
  c.spacing[0] = 0.5;
  c.spacing[1] = 0.375;
  c.spacing[2] = 0.625;
  c.shape[0] = 19;
  c.shape[1] = 23;
  c.shape[2] = dim == 3 ? 13 : 1;
  c.cutoff = 1.7;
  c.exclusion = 0.3;
  c.blobbiness = 2.5;
  c.beta = 6.5;
  c.x.assign(static_cast<std::size_t>(dim), {});
  for (int k = 0; k < dim; ++k) {
    const double lo = c.origin[k] - 2.5, hi = c.origin[k] + static_cast<double>(c.shape[k] - 1) * c.spacing[k] + 2.5;
    std::uniform_real_distribution<double> u(lo, hi);
    for (std::size_t i = 0; i < n; ++i) c.x[static_cast<std::size_t>(k)].push_back(u(rng));
  }
  std::uniform_real_distribution<double> q(-0.8, 0.8), r(0.6, 1.4);
  for (std::size_t i = 0; i < n; ++i) {
    c.re.push_back(q(rng));
    if (kind == LatticeCase::Blinn) c.radius.push_back(r(rng));
    if (kind == LatticeCase::KaiserBesselRadial || kind == LatticeCase::KaiserBesselSeparable) c.im.push_back(q(rng));
  }
  return c;
}

class LatticeOracle : public ::testing::TestWithParam<std::tuple<LatticeCase::Kind, Precision, int>> {};

TEST_P(LatticeOracle, RandomSourcesWithinTheStatedBound) {
  const auto [kind, precision, dim] = GetParam();
  for (std::uint64_t seed : {1u, 2u}) {
    const double worst = expect_within_bound(random_case(seed, kind, 400, dim), precision);
    RecordProperty("worst_error_over_bound", std::to_string(worst));
    EXPECT_LE(worst, 1.0);
  }
}

INSTANTIATE_TEST_SUITE_P(
    Functions, LatticeOracle,
    ::testing::Combine(::testing::Values(LatticeCase::Coulomb, LatticeCase::Blinn, LatticeCase::KaiserBesselRadial,
                                         LatticeCase::KaiserBesselSeparable),
                       ::testing::Values(Precision::Single, Precision::Double), ::testing::Values(2, 3)));

TEST(Lattice, PeriodicAxesAgainstTheBruteForceAndExplicitImages) {
  for (auto kind : {LatticeCase::Coulomb, LatticeCase::KaiserBesselSeparable}) {
    LatticeCase c = random_case(7, kind, 300);
    c.shape[0] = 12;
    c.shape[1] = 10;
    c.shape[2] = 9;
    c.periodic[0] = c.periodic[1] = c.periodic[2] = true;
    c.cutoff = 1.8;  // ≤ half of the smallest period, 10 · 0.375 / 2
    // Sources anywhere, also several periods away: the nearest image is the rule's.
    for (auto& col : c.x)
      for (double& v : col) v = v * 3 - 5;
    for (Precision p : {Precision::Single, Precision::Double}) EXPECT_LE(expect_within_bound(c, p), 1.0);
    // The same sources with their images placed explicitly, on an open lattice.
    LatticeCase open = c;
    for (bool& per : open.periodic) per = false;
    open.x.assign(3, {});
    open.re.clear();
    open.im.clear();
    for (std::size_t i = 0; i < c.x[0].size(); ++i)
      for (int sx = -10; sx <= 10; ++sx)
        for (int sy = -10; sy <= 10; ++sy)
          for (int sz = -10; sz <= 10; ++sz) {
            const int s[3] = {sx, sy, sz};
            double y[3];
            bool near = true;
            for (int k = 0; k < 3; ++k) {
              y[k] = c.x[static_cast<std::size_t>(k)][i] + s[k] * static_cast<double>(c.shape[k]) * c.spacing[k];
              const double lo = c.origin[k] - 2, hi = c.origin[k] + static_cast<double>(c.shape[k] - 1) * c.spacing[k] + 2;
              near = near && y[k] > lo && y[k] < hi;
            }
            if (!near) continue;
            for (int k = 0; k < 3; ++k) open.x[static_cast<std::size_t>(k)].push_back(y[k]);
            open.re.push_back(c.re[i]);
            if (!c.im.empty()) open.im.push_back(c.im[i]);
          }
    const auto a = oracle::lattice_brute_force(c);
    const auto b = oracle::lattice_brute_force(open);
    for (std::size_t i = 0; i < a.size(); ++i) {
      EXPECT_EQ(a[i].terms, b[i].terms) << i;
      EXPECT_EQ(a[i].excluded, b[i].excluded) << i;
      EXPECT_NEAR(static_cast<double>(a[i].re), static_cast<double>(b[i].re), 1e-9 * (1 + a[i].abs_sum));
    }
  }
}

TEST(Lattice, OneChargeIsTheClosedForm) {
  LatticeCase c;
  c.shape[0] = 15;
  c.shape[1] = 14;
  c.shape[2] = 13;
  c.spacing[0] = c.spacing[1] = c.spacing[2] = 0.5;
  c.cutoff = 3.0;
  c.exclusion = 0.25;
  c.x = {{3.1}, {2.95}, {3.3}};
  c.re = {-0.7};
  for (Precision p : {Precision::Single, Precision::Double}) {
    const LatticeMap m = run_case(c, p);
    for (std::int64_t iz = 0; iz < 13; ++iz)
      for (std::int64_t iy = 0; iy < 14; ++iy)
        for (std::int64_t ix = 0; ix < 15; ++ix) {
          const double dx = 3.1 - 0.5 * ix, dy = 2.95 - 0.5 * iy, dz = 3.3 - 0.5 * iz;
          const long double r2 = (long double)dx * dx + (long double)dy * dy + (long double)dz * dz;
          long double want = 0;
          if (r2 < 9.0L && r2 >= 0.0625L) {
            const long double s = 1 - r2 / 9.0L;
            want = -0.7L * s * s / std::sqrt(r2);
          }
          const double got = m.values[static_cast<std::size_t>(ix + 15 * (iy + 14 * iz))];
          const double tol = m.bound.term + m.bound.step / 2 + std::fabs(static_cast<double>(want)) *
                                                                     (p == Precision::Single ? 0x1p-24 : 0x1p-52);
          EXPECT_NEAR(got, static_cast<double>(want), tol) << ix << " " << iy << " " << iz;
        }
    EXPECT_EQ(m.excluded_count, 1u);  // node (6, 6, 7), 0.23 from the charge
    EXPECT_EQ(m.excluded[static_cast<std::size_t>(6 + 15 * (6 + 14 * 7))], 1);
  }
}

TEST(Lattice, AdversarialSourcesOnNodesOnTheCutoffAndFarAway) {
  LatticeCase c;
  c.shape[0] = 9;
  c.shape[1] = 8;
  c.shape[2] = 7;
  c.spacing[0] = c.spacing[1] = c.spacing[2] = 0.5;
  c.cutoff = 1.0;  // a multiple of the spacing: nodes at exactly r = C are out (r < C)
  c.exclusion = 0.5;  // exactly one spacing: the neighbours at exactly R_ex are in
  // On nodes, on bin and tile boundaries (node 8 starts the second tile along x), outside the
  // lattice within the cutoff, and beyond it.
  c.x = {{1.0, 4.0, 2.0, -0.75, 6.0, 1.5, 1.5}, {1.0, 0.5, 2.0, 1.0, 1.0, 3.5, 1.25},
         {1.0, 2.0, 0.0, 1.0, 1.0, 3.0, 1.75}};
  c.re = {0.5, -0.25, 0.125, 1.0, 1.0, -0.5, 0.75};
  for (Precision p : {Precision::Single, Precision::Double}) {
    EXPECT_LE(expect_within_bound(c, p), 1.0);
    const LatticeMap m = run_case(c, p);
    EXPECT_EQ(m.excluded[static_cast<std::size_t>(2 + 9 * (2 + 8 * 2))], 1);  // the node under source 0
  }
  for (auto kind : {LatticeCase::Blinn, LatticeCase::KaiserBesselRadial, LatticeCase::KaiserBesselSeparable}) {
    LatticeCase k = c;
    k.kind = kind;
    k.blobbiness = 3;
    k.beta = 9;
    if (kind == LatticeCase::Blinn) k.radius.assign(k.re.size(), 0.75);
    for (Precision p : {Precision::Single, Precision::Double}) EXPECT_LE(expect_within_bound(k, p), 1.0);
  }
  // Huge offsets: the same configuration moved by 2^20 + a fraction.
  LatticeCase far = c;
  for (int k = 0; k < 3; ++k) {
    far.origin[k] += 1048576.0 + 0.1 * (k + 1);
    for (double& v : far.x[static_cast<std::size_t>(k)]) v += 1048576.0 + 0.1 * (k + 1);
  }
  for (Precision p : {Precision::Single, Precision::Double}) EXPECT_LE(expect_within_bound(far, p), 1.0);
  // One node, no sources near it; and no sources at all.
  LatticeCase one = c;
  one.shape[0] = one.shape[1] = one.shape[2] = 1;
  EXPECT_LE(expect_within_bound(one, Precision::Single), 1.0);
  LatticeCase none = c;
  none.x = {{}, {}, {}};
  none.re.clear();
  const LatticeMap m = run_case(none, Precision::Single);
  EXPECT_TRUE(std::all_of(m.values.begin(), m.values.end(), [](double v) { return v == 0; }));
}

TEST(Lattice, SameBitsForAnyThreadsBinsAndSourceOrder) {
  for (auto kind : {LatticeCase::Coulomb, LatticeCase::Blinn, LatticeCase::KaiserBesselSeparable}) {
    const LatticeCase c = random_case(11, kind, 500);
    for (Precision p : {Precision::Single, Precision::Double}) {
      const LatticeMap base = run_case(c, p, 1);
      EXPECT_EQ(run_case(c, p, 3).values, base.values);
      for (const char* bin : {"1", "2", "5", "8"}) {
        setenv("TWOBODY_LATTICE_BIN", bin, 1);
        EXPECT_EQ(run_case(c, p, 2).values, base.values) << "bins of " << bin;
      }
      unsetenv("TWOBODY_LATTICE_BIN");
      LatticeCase shuffled = c;
      std::vector<std::size_t> order(c.re.size());
      std::iota(order.begin(), order.end(), 0);
      std::shuffle(order.begin(), order.end(), std::mt19937_64(5));
      auto permute = [&](std::vector<double>& v) {
        if (v.empty()) return;
        std::vector<double> w(v.size());
        for (std::size_t i = 0; i < v.size(); ++i) w[i] = v[order[i]];
        v = w;
      };
      for (auto& col : shuffled.x) permute(col);
      permute(shuffled.re);
      permute(shuffled.im);
      permute(shuffled.radius);
      EXPECT_EQ(run_case(shuffled, p, 2).values, base.values);
    }
  }
}

// Seed 002's capped depth on the GPU: the sources beyond the cap (the overflow) are summed on the
// CPU (cpu::lattice_sums) and added to the GPU's sums as integers. Here on the CPU alone: each bin
// cut after its first 2 sources, the two parts' integer sums add to the whole's, and the whole's
// integers are the map's values (the bits of run()).
TEST(Lattice, OverflowSumsAddUpToTheWholeMap) {
  setenv("TWOBODY_LATTICE_BIN", "4", 1);  // bins of 4³ nodes: several sources a bin
  for (auto kind : {LatticeCase::Coulomb, LatticeCase::KaiserBesselSeparable, LatticeCase::Blinn}) {
    const LatticeCase c = random_case(31, kind, 700);
    for (Precision p : {Precision::Single, Precision::Double}) {
      Request r = request_of(c, p);
      attach_sources(r, c);
      const LatticePlan plan = make_lattice_plan(r.stat, r.sources, on_the_cpu(2));
      const lattice::Binned all = lattice::bin_sources(plan);
      lattice::Binned head, tail;  // each bin's first 2 sources, and the rest
      head.axis = tail.axis = all.axis;
      head.start.push_back(0);
      tail.start.push_back(0);
      for (std::size_t b = 0; b + 1 < all.start.size(); ++b) {
        for (std::uint64_t i = all.start[b]; i < all.start[b + 1]; ++i) (i - all.start[b] < 2 ? head : tail).sources.push_back(all.sources[i]);
        head.start.push_back(head.sources.size());
        tail.start.push_back(tail.sources.size());
      }
      ASSERT_GT(tail.sources.size(), 0u) << "the case must overflow a depth of 2";
      const cpu::LatticeSums whole = cpu::lattice_sums(plan, all), a = cpu::lattice_sums(plan, head),
                             b = cpu::lattice_sums(plan, tail);
      EXPECT_EQ(a.terms + b.terms, whole.terms);
      const bool single = p == Precision::Single;
      const std::size_t slots = single ? whole.narrow.size() : whole.wide.size();
      for (std::size_t s = 0; s < slots; ++s) {
        if (single) ASSERT_EQ(a.narrow[s] + b.narrow[s], whole.narrow[s]) << s;
        else ASSERT_TRUE(a.wide[s] + b.wide[s] == whole.wide[s]) << s;
      }
      for (std::size_t n = 0; n < whole.excluded.size(); ++n) ASSERT_EQ(a.excluded[n] | b.excluded[n], whole.excluded[n]) << n;
      const LatticeMap m = run_case(c, p, 2);
      ASSERT_EQ(m.values.size(), slots);
      EXPECT_EQ(m.terms, whole.terms);
      const std::size_t comps = static_cast<std::size_t>(plan.components);
      for (std::size_t s = 0; s < slots; ++s) {
        const bool ex = !whole.excluded.empty() && whole.excluded[s / comps] != 0;
        const double v = lattice::node_value(plan.grid, single ? static_cast<FixedSum>(whole.narrow[s]) : whole.wide[s], ex, single);
        ASSERT_EQ(std::memcmp(&v, &m.values[s], sizeof v), 0) << s;
      }
    }
  }
  unsetenv("TWOBODY_LATTICE_BIN");
}

// Sources on a finer periodic lattice of dyadic spacing: every node sees the same multiset of
// displacements, so every node's sum is the same bits whatever order its terms came in.
TEST(Lattice, UniformDensityGivesEqualNodesBitForBit) {
  LatticeCase c;
  c.kind = LatticeCase::KaiserBesselRadial;
  c.shape[0] = c.shape[1] = c.shape[2] = 8;
  c.periodic[0] = c.periodic[1] = c.periodic[2] = true;
  c.cutoff = 2.0;
  c.beta = 7;
  c.x.assign(3, {});
  for (int z = 0; z < 16; ++z)
    for (int y = 0; y < 16; ++y)
      for (int x = 0; x < 16; ++x) {
        c.x[0].push_back(0.5 * x + 0.25);
        c.x[1].push_back(0.5 * y + 0.25);
        c.x[2].push_back(0.5 * z + 0.25);
      }
  for (Precision p : {Precision::Single, Precision::Double}) {
    const LatticeMap m = run_case(c, p);
    for (double v : m.values) EXPECT_EQ(v, m.values[0]);
    EXPECT_GT(m.values[0], 0);
  }
}

// A periodic map of sources moved by one spacing is the map rolled by one node, bit for bit.
TEST(Lattice, TranslationByOneSpacingRollsThePeriodicMap) {
  LatticeCase c = random_case(3, LatticeCase::Blinn, 200);
  c.origin[0] = c.origin[1] = c.origin[2] = 0;
  c.spacing[0] = c.spacing[1] = c.spacing[2] = 0.5;
  c.shape[0] = 10;
  c.shape[1] = 9;
  c.shape[2] = 8;
  c.periodic[0] = c.periodic[1] = c.periodic[2] = true;
  c.cutoff = 1.5;
  for (auto& col : c.x)
    for (double& v : col) v = std::ldexp(std::round(std::ldexp(std::fabs(v), 10)), -10);  // dyadic
  LatticeCase moved = c;
  for (double& v : moved.x[0]) v += 0.5;
  for (Precision p : {Precision::Single, Precision::Double}) {
    const LatticeMap a = run_case(c, p), b = run_case(moved, p);
    for (std::int64_t z = 0; z < 8; ++z)
      for (std::int64_t y = 0; y < 9; ++y)
        for (std::int64_t x = 0; x < 10; ++x)
          EXPECT_EQ(b.values[static_cast<std::size_t>((x + 1) % 10 + 10 * (y + 9 * z))],
                    a.values[static_cast<std::size_t>(x + 10 * (y + 9 * z))]);
  }
}

TEST(Lattice, BesselI0AgainstTheStandardLibrary) {
  for (double x = 0; x <= 60; x += 0.173) {
    const double want = std::cyl_bessel_i(0.0, x);
    EXPECT_LE(std::fabs(portable::bessel_i0(x) - want), (1.5 * x + 200) * 0x1p-53 * want + 1e-15 * want) << x;
  }
}

TEST(Lattice, BesselI0PolynomialWithinItsBoundOfAnExtendedPrecisionSeries) {
  // x ≤ 20 is a polynomial of 37 rounded coefficients (Estrin): within 75·2^−53 of the series summed in
  // long double (64-bit significands: its own error ~2^−60), and continuous with the recurrence.
  for (double x = 0; x <= 20; x += 0.00731) {
    const long double q = 0.25L * static_cast<long double>(x) * static_cast<long double>(x);
    long double term = 1, sum = 1;
    for (int k = 1; k < 200; ++k) {
      term = term * q / (static_cast<long double>(k) * k);
      sum += term;
    }
    EXPECT_LE(std::fabs(static_cast<long double>(portable::bessel_i0(x)) - sum), 75 * 0x1p-53L * sum) << x;
    EXPECT_EQ(portable::bessel_i0(-x), portable::bessel_i0(x));
  }
  EXPECT_NEAR(portable::bessel_i0(20.0) / portable::bessel_i0(std::nextafter(20.0, 21.0)), 1.0, 1e-13);
}

TEST(Lattice, AutoTakesTheGpuForLargeMapsOnlyAndSaysWhy) {
  // 2 000 sources, cutoff 8 spacings: ~4.3·10^6 terms (the CPU); the same with 100 000 sources and a
  // cutoff of 16: ~1.7·10^9 (the GPU where one is present, else the CPU saying there is none).
  std::mt19937_64 rng(5);
  std::uniform_real_distribution<double> u(0, 40);
  std::vector<std::vector<double>> x(3);
  for (auto& c : x)
    for (int i = 0; i < 100000; ++i) c.push_back(u(rng));
  const PointSet many = PointSet::from_columns(x);
  for (auto& c : x) c.resize(2000);
  const PointSet few = PointSet::from_columns(x);
  reduce::OntoLattice stat;
  stat.lattice = Lattice::spanning(few, {1, 1, 1}, 0);
  stat.function.cutoff = 8;
  stat.function.exclusion = 1;
  LatticeSources src;
  src.points = &few;
  EXPECT_NE(explain(stat, src).find("below 1e+08: the CPU"), std::string::npos) << explain(stat, src);
  stat.function.cutoff = 16;
  src.points = &many;
  const std::string plan = explain(stat, src);
  const bool gpu = plan.rfind("backend: cuda", 0) == 0;
  EXPECT_NE(plan.find(gpu ? "the GPU, the CPU's bits" : "but no GPU"), std::string::npos) << plan;
  EXPECT_TRUE(gpu || plan.rfind("backend: cpu", 0) == 0) << plan;
}

TEST(Lattice, SpanningAndCentredLattices) {
  const PointSet p = PointSet::from_columns({{0.0, 2.2}, {1.0, -1.0}, {5.0, 5.0}});
  const Lattice L = Lattice::spanning(p, {0.5, 0.5, 0.5}, 1.0);
  EXPECT_EQ(L.origin[0], -1.0);
  EXPECT_EQ(L.origin[1], -2.0);
  EXPECT_EQ(L.shape[0], 10);  // extent 4.2 → 9 cells → 10 nodes
  EXPECT_EQ(L.shape[1], 9);
  EXPECT_EQ(L.shape[2], 5);
  EXPECT_GE(L.node(0, L.shape[0] - 1), 3.2);
  const Lattice G = Lattice::centred_grid(3, {8, 8, 6});
  EXPECT_EQ(G.node(0, 0), -4.0);
  EXPECT_EQ(G.node(2, 3), 0.0);
  EXPECT_TRUE(G.periodic[2]);
}

TEST(Lattice, BadRequestsAreClearErrors) {
  LatticeCase c = random_case(1, LatticeCase::Coulomb, 10);
  auto kind_of = [](const LatticeCase& k, auto&& change) {
    Request r = request_of(k, Precision::Single);
    r.sources.points = &r.points;
    r.sources.strength = k.re;
    r.sources.radius = k.radius;
    change(r);
    try {
      run(r.stat, r.sources, {});
    } catch (const Error& e) {
      return e.kind();
    }
    return ErrorKind::Internal;
  };
  EXPECT_EQ(kind_of(c, [](Request& r) { r.stat.function.exclusion = 0; }), ErrorKind::Config);
  EXPECT_EQ(kind_of(c, [](Request& r) { r.stat.function.cutoff = -1; }), ErrorKind::Config);
  EXPECT_EQ(kind_of(c, [](Request& r) { r.stat.lattice.spacing[1] = 0; }), ErrorKind::Config);
  EXPECT_EQ(kind_of(c, [](Request& r) { r.stat.lattice.shape[2] = 0; }), ErrorKind::Config);
  EXPECT_EQ(kind_of(c, [](Request& r) { r.stat.lattice.dim = 4; }), ErrorKind::Config);
  EXPECT_EQ(kind_of(c, [](Request& r) { r.stat.lattice.periodic[0] = true; r.stat.function.cutoff = 5; }),
            ErrorKind::Config);
  EXPECT_EQ(kind_of(c, [](Request& r) { r.sources.strength = r.sources.strength.first(3); }), ErrorKind::Input);
  EXPECT_EQ(kind_of(c, [](Request& r) { r.points.coord(1)[4] = NAN; }), ErrorKind::Input);
  EXPECT_EQ(kind_of(c, [](Request& r) { r.stat.function.kind = LatticeKernel::BlinnBlob; }), ErrorKind::Input);
  EXPECT_EQ(kind_of(c, [](Request& r) { r.stat.function.kind = LatticeKernel::KaiserBessel; r.stat.function.oversampling = 0.4; }),
            ErrorKind::Config);
  EXPECT_EQ(kind_of(c, [](Request& r) { r.stat.binning = LatticeBinning::Regular; }), ErrorKind::Config);  // the GPU's
  EXPECT_EQ(kind_of(c, [](Request& r) { r.stat.bin_depth = 4; }), ErrorKind::Config);  // caps regular bins only
  EXPECT_EQ(kind_of(c, [](Request& r) { r.stat.binning = LatticeBinning::Regular; r.stat.bin_depth = -1; }),
            ErrorKind::Config);
  // One backend a map (cuda runs where there is a GPU: tests/cuda_lattice_test.cpp).
  RunOptions hybrid;
  hybrid.backend = "hybrid";
  Request r = request_of(c, Precision::Single);
  r.sources.points = &r.points;
  try {
    run(r.stat, r.sources, hybrid);
    ADD_FAILURE() << "a hybrid lattice map ran";
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::Backend);
  }
}

}  // namespace

namespace {

TEST(LatticeMaps, GriddingIsTheKaiserBesselMapOfTheWeightedSamples) {
  std::mt19937_64 rng(9);
  std::normal_distribution<double> centre(0.0, 3.0);  // dense at k-space's centre
  std::uniform_real_distribution<double> v(-1, 1), w(0.1, 2);
  std::vector<std::vector<double>> k(3);
  std::vector<double> re, im, sdc;
  for (int i = 0; i < 300; ++i) {
    for (auto& col : k) col.push_back(centre(rng));
    re.push_back(v(rng));
    im.push_back(v(rng));
    sdc.push_back(w(rng));
  }
  const PointSet p = PointSet::from_columns(k);
  GriddingOptions g;
  g.grid = {16, 16, 12};
  const LatticeMap m = grid_samples(p, re, im, sdc, g, {});
  EXPECT_EQ(m.components, 2);
  // The oracle on the same samples, their values weighted in float64.
  LatticeCase c;
  c.kind = LatticeCase::KaiserBesselSeparable;
  c.shape[0] = 16;
  c.shape[1] = 16;
  c.shape[2] = 12;
  c.origin[0] = c.origin[1] = -8;
  c.origin[2] = -6;
  c.periodic[0] = c.periodic[1] = c.periodic[2] = true;
  c.cutoff = 2;
  c.beta = LatticeFunction{LatticeKernel::KaiserBessel, 2.0}.kaiser_bessel_beta();
  c.x = k;
  for (std::size_t i = 0; i < re.size(); ++i) {
    c.re.push_back(re[i] * sdc[i]);
    c.im.push_back(im[i] * sdc[i]);
  }
  EXPECT_EQ(run_case(c, Precision::Single).values, m.values);
  EXPECT_LE(expect_within_bound(c, Precision::Single), 1.0);
}

TEST(LatticeMaps, WritesNpyWithItsSidecarAndOpenDx) {
  LatticeCase c = random_case(4, LatticeCase::Coulomb, 50);
  const PointSet p = PointSet::from_columns(c.x);
  PotentialOptions o;
  o.at.spacing = 0.5;
  o.at.padding = 1.0;
  o.cutoff = 2.0;
  o.exclusion = 0.5;
  const LatticeMap m = potential_map(p, c.re, o, {});
  const std::string dir = ::testing::TempDir();
  write_lattice_map(dir + "/v.npy", m, R"({"map": "potential"})");
  std::ifstream in(dir + "/v.npy", std::ios::binary);
  const std::string bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  const std::size_t header = 10 + static_cast<unsigned char>(bytes[8]) + 256u * static_cast<unsigned char>(bytes[9]);
  EXPECT_EQ(header % 64, 0u);
  const std::string dict = bytes.substr(10, header - 10);
  EXPECT_NE(dict.find(fmt::format("'shape': ({}, {}, {})", m.lattice.shape[2], m.lattice.shape[1], m.lattice.shape[0])),
            std::string::npos)
      << dict;
  EXPECT_NE(dict.find("'<f4'"), std::string::npos);
  ASSERT_EQ(bytes.size(), header + 4 * m.values.size());
  for (std::size_t i = 0; i < m.values.size(); ++i) {
    float f;
    std::memcpy(&f, bytes.data() + header + 4 * i, 4);
    EXPECT_EQ(static_cast<double>(f), m.values[i]);
  }
  std::ifstream js(dir + "/v.npy.json");
  const auto meta = nlohmann::json::parse(js);
  EXPECT_EQ(meta["origin"][0].get<double>(), m.lattice.origin[0]);
  EXPECT_EQ(meta["map"], "potential");
  EXPECT_EQ(meta["precision"], "single");
  write_lattice_map(dir + "/v.dx", m);
  std::ifstream dx(dir + "/v.dx");
  std::string line;
  std::getline(dx, line);
  std::getline(dx, line);
  EXPECT_EQ(line, fmt::format("object 1 class gridpositions counts {} {} {}", m.lattice.shape[0], m.lattice.shape[1],
                              m.lattice.shape[2]));
  EXPECT_THROW(write_lattice_map(dir + "/v.cube", m), Error);
  // The middle slice as a PNG: its signature and size.
  write_lattice_map(dir + "/v.png", m);
  std::ifstream png(dir + "/v.png", std::ios::binary);
  const std::string head((std::istreambuf_iterator<char>(png)), std::istreambuf_iterator<char>());
  ASSERT_GT(head.size(), 24u);
  EXPECT_EQ(head.substr(1, 3), "PNG");
  const auto be32 = [&](std::size_t at) {
    return (static_cast<unsigned char>(head[at]) << 24) | (static_cast<unsigned char>(head[at + 1]) << 16) |
           (static_cast<unsigned char>(head[at + 2]) << 8) | static_cast<unsigned char>(head[at + 3]);
  };
  EXPECT_EQ(be32(16), m.lattice.shape[0]);
  EXPECT_EQ(be32(20), m.lattice.shape[1]);
#ifdef TWOBODY_HAVE_HDF5
  // HDF5: /map of shape (nz, ny, nx), the lattice as attributes, /excluded when any.
  write_lattice_map(dir + "/v.h5", m);
  const hid_t f = H5Fopen((dir + "/v.h5").c_str(), H5F_ACC_RDONLY, H5P_DEFAULT);
  ASSERT_GE(f, 0);
  const hid_t ds = H5Dopen2(f, "map", H5P_DEFAULT);
  const hid_t space = H5Dget_space(ds);
  hsize_t dims[3];
  ASSERT_EQ(H5Sget_simple_extent_ndims(space), 3);
  H5Sget_simple_extent_dims(space, dims, nullptr);
  EXPECT_EQ(dims[0], static_cast<hsize_t>(m.lattice.shape[2]));
  EXPECT_EQ(dims[2], static_cast<hsize_t>(m.lattice.shape[0]));
  std::vector<float> back(m.values.size());
  ASSERT_GE(H5Dread(ds, H5T_NATIVE_FLOAT, H5S_ALL, H5S_ALL, H5P_DEFAULT, back.data()), 0);
  for (std::size_t i = 0; i < back.size(); ++i) EXPECT_EQ(static_cast<double>(back[i]), m.values[i]);
  double origin[3];
  const hid_t attr = H5Aopen(ds, "origin", H5P_DEFAULT);
  ASSERT_GE(H5Aread(attr, H5T_NATIVE_DOUBLE, origin), 0);
  EXPECT_EQ(origin[1], m.lattice.origin[1]);
  EXPECT_EQ(H5Lexists(f, "excluded", H5P_DEFAULT) > 0, m.excluded_count > 0);
  H5Aclose(attr);
  H5Sclose(space);
  H5Dclose(ds);
  H5Fclose(f);
#endif
}

}  // namespace

namespace {

TEST(LatticeMaps, ReadsPqrAtoms) {
  const std::string path = ::testing::TempDir() + "/atoms.pqr";
  {
    std::ofstream out(path);
    out << "REMARK   made by hand\n"
           "ATOM      1  N   ALA A   1      -1.500   2.250  10.000 -0.3000 1.8240\n"
           "HETATM    2  O   HOH     2       0.125  -3.000   4.500  0.4170 1.5000\n"
           "TER\nEND\n";
  }
  const Atoms a = read_pqr(path);
  ASSERT_EQ(a.positions.size(), 2u);
  EXPECT_EQ(a.positions.coord(0)[0], -1.5);
  EXPECT_EQ(a.positions.coord(2)[1], 4.5);
  EXPECT_EQ(a.charges[1], 0.417);
  EXPECT_EQ(a.radii[0], 1.824);
  {
    std::ofstream out(path);
    out << "ATOM      1  N   ALA A   1      -1.500   2.250  10.000 -0.3000 nan\n";
  }
  try {
    read_pqr(path);
    ADD_FAILURE() << "a non-finite radius was read";
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::Input);
    EXPECT_NE(std::string(e.what()).find(":1:"), std::string::npos) << e.what();
  }
  EXPECT_THROW(read_pqr(::testing::TempDir() + "/missing.pqr"), Error);
}

}  // namespace
