// Short-range forces (reduce::PointSums, short_range_forces) against the float64 brute force
// (tests/oracle/force_brute_force.hpp), closed forms, Newton's third law, and bit equalities over
// threads, traversal paths and the order of the bodies.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <numeric>
#include <random>

#include "oracle/force_brute_force.hpp"
#include "twobody/error.hpp"
#include "twobody/exact_sums.hpp"
#include "twobody/forces.hpp"

namespace {

using namespace twobody;

struct Bodies {
  oracle::ForceCase c;
  PointSet points;
  std::optional<Box> box;
  ForceOptions options;
};

Bodies bodies_of(oracle::ForceCase c) {
  Bodies b;
  std::vector<std::vector<double>> cols(c.dim, std::vector<double>(c.x.size()));
  for (std::size_t i = 0; i < c.x.size(); ++i)
    for (int d = 0; d < c.dim; ++d) cols[d][i] = c.x[i][d];
  b.points = PointSet::from_columns(std::move(cols));
  if (!c.box.empty()) b.box = Box::from_lengths(c.box);
  b.options.cutoff = c.cutoff;
  b.options.force.potential = c.coulomb ? PairPotential::CoulombSwitched : PairPotential::LennardJones;
  b.options.force.epsilon = c.epsilon;
  b.options.force.sigma = c.sigma;
  b.options.force.shift = c.shift;
  b.c = std::move(c);
  return b;
}

BodyForces forces_of(const Bodies& b, RunOptions run = {}) {
  run.backend = "cpu";
  return short_range_forces(b.points, b.c.q, b.options, b.box, run);
}

// Uniform bodies at least `gap` apart (rejection), in [lo, lo + side)^dim.
oracle::ForceCase uniform(std::size_t n, int dim, double side, double gap, unsigned seed, double lo = 0) {
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<double> u(0, side);
  oracle::ForceCase c;
  c.dim = dim;
  while (c.x.size() < n) {
    std::vector<double> p(dim);
    for (auto& v : p) v = lo + u(rng);
    bool ok = true;
    for (const auto& q : c.x) {
      double r2 = 0;
      for (int d = 0; d < dim; ++d) r2 += (p[d] - q[d]) * (p[d] - q[d]);
      ok = ok && r2 >= gap * gap;
    }
    if (ok) c.x.push_back(p);
  }
  return c;
}

// Every body's force and energy within its terms' rounding of the oracle's, the partners equal.
void expect_oracle(const Bodies& b, const BodyForces& f) {
  const oracle::ForceSums o = oracle::brute_force_forces(b.c);
  const std::size_t n = b.c.x.size();
  ASSERT_EQ(f.force.size(), n * b.c.dim);
  // Each term within a few ulps of the oracle's, plus half a step of the sums' grid (fixed by the
  // largest term the closest pair can have: docs/exactness.md#forces).
  double charge = 0;
  for (double q : b.c.q) charge = std::max(charge, std::fabs(q));
  const PairTermBounds bound = pair_term_bounds(b.options.force, b.c.cutoff, std::max(f.fine, f.closest), charge);
  const double step_f = std::ldexp(1.0, SumGrid::for_bound(bound.force).exponent);
  const double step_e = std::ldexp(1.0, SumGrid::for_bound(bound.half_energy).exponent);
  long double scale = 0;
  for (std::size_t i = 0; i < n; ++i) {
    EXPECT_EQ(f.partners[i], o.partners[i]) << "body " << i;
    const double grid = 0.5 * static_cast<double>(o.partners[i]);
    for (int d = 0; d < b.c.dim; ++d) {
      const double tol = 1e-13 * static_cast<double>(o.force_abs[i][d]) + grid * step_f + 1e-300;
      EXPECT_NEAR(f.force[i * b.c.dim + d], static_cast<double>(o.force[i][d]), tol) << "body " << i << " axis " << d;
    }
    EXPECT_NEAR(f.energy[i], static_cast<double>(o.energy[i]),
                1e-13 * static_cast<double>(o.energy_abs[i]) + grid * step_e + 1e-300)
        << "body " << i;
    scale += o.energy_abs[i];
  }
  EXPECT_NEAR(f.total_energy, static_cast<double>(o.total_energy), 1e-13 * static_cast<double>(scale) + n * 64 * step_e);
  const double step_v = std::ldexp(1.0, SumGrid::for_bound(bound.virial).exponent);
  EXPECT_NEAR(f.virial, static_cast<double>(o.virial), 1e-12 * std::fabs(static_cast<double>(o.virial)) + n * 64 * step_v);
}

// Σ F = 0 exactly: the engine's own integers (run() keeps them in Result::exact).
void expect_zero_net_force(const Bodies& b, double closest, double fine = 0) {
  Statistic s = forces_statistic(b.options, b.box, closest, b.options.force.potential == PairPotential::CoulombSwitched,
                                 fine);
  PointSet p = b.points;
  if (!b.c.q.empty()) p.set_weights(b.c.q);
  RunOptions run;
  run.backend = "cpu";
  const Result r = twobody::run(s, p, nullptr, run);
  const std::size_t cols = r.per_point_a.components;
  ASSERT_EQ(cols, static_cast<std::size_t>(b.c.dim) + 1);
  for (std::size_t d = 0; d + 1 < cols; ++d) {
    WideSum net;
    for (std::size_t i = 0; i < b.c.x.size(); ++i) net += r.exact.point_sums_a[i * cols + d];
    EXPECT_TRUE(net == WideSum{}) << "axis " << d;
  }
  WideSum energy;
  for (std::size_t i = 0; i < b.c.x.size(); ++i) energy += r.exact.point_sums_a[i * cols + cols - 1];
  EXPECT_TRUE(energy == r.exact.totals[0]);
}

TEST(Forces, TwoBodiesClosedFormAndNewton) {
  for (double r : {0.95, 1.12, 1.5, 2.4999}) {
    oracle::ForceCase c;
    c.x = {{0.25, 0.5, 0.75}, {0.25 + r, 0.5, 0.75}};
    c.epsilon = 0.7;
    c.sigma = 1.0;
    const Bodies b = bodies_of(c);
    const BodyForces f = forces_of(b);
    const double dx = c.x[0][0] - c.x[1][0], r2 = dx * dx;
    const double s6 = std::pow(1.0 / std::sqrt(r2), 6);
    const double fx = 24 * 0.7 * (2 * s6 * s6 - s6) / r2 * dx, e = 4 * 0.7 * (s6 * s6 - s6);
    EXPECT_NEAR(f.force[0], fx, 1e-13 * std::fabs(fx)) << r;
    EXPECT_EQ(f.force[0], -f.force[3]);  // Newton's third law, bit for bit
    EXPECT_EQ(f.force[1], 0.0);
    EXPECT_EQ(f.force[4], 0.0);
    EXPECT_EQ(f.energy[0], f.energy[1]);
    EXPECT_NEAR(f.total_energy, e, 1e-13 * std::fabs(e));
    EXPECT_NEAR(f.virial, fx * dx, 1e-12 * std::fabs(fx * dx));
    EXPECT_EQ(f.partners[0], 1u);
  }
  // Beyond the cutoff: nothing.
  oracle::ForceCase c;
  c.x = {{0, 0, 0}, {2.5, 0, 0}};
  const BodyForces f = forces_of(bodies_of(c));
  EXPECT_EQ(f.force[0], 0.0);
  EXPECT_EQ(f.partners[0], 0u);
  EXPECT_EQ(f.total_energy, 0.0);
}

TEST(Forces, RandomOpenLennardJonesAgainstOracle) {
  for (int dim : {2, 3}) {
    oracle::ForceCase c = uniform(dim == 3 ? 600 : 400, dim, dim == 3 ? 9.0 : 20.0, 0.8, 11 + dim);
    c.epsilon = 1.3;
    c.sigma = 1.1;
    c.cutoff = 2.5 * 1.1;
    const Bodies b = bodies_of(c);
    const BodyForces f = forces_of(b);
    expect_oracle(b, f);
    expect_zero_net_force(b, f.closest);
    c.shift = true;
    const Bodies s = bodies_of(c);
    expect_oracle(s, forces_of(s));
  }
}

TEST(Forces, PeriodicAcrossWallsAgainstOracle) {
  // A small box: most bodies have partners through a wall.
  oracle::ForceCase c = uniform(300, 3, 6.0, 0.75, 5);
  c.box = {6.0, 6.0, 6.0};
  c.cutoff = 2.5;
  // Pairs straddling every wall, one a hair inside it.
  c.x.push_back({0.0, 3.0, 3.0});
  c.x.push_back({5.999999, 3.0, 3.4});
  c.x.push_back({1.5, 0.0, 1.0});
  c.x.push_back({1.5, 5.5, 1.0});
  const Bodies b = bodies_of(c);
  const BodyForces f = forces_of(b);
  expect_oracle(b, f);
  expect_zero_net_force(b, f.closest);
  // Orthorhombic too.
  oracle::ForceCase o = uniform(250, 3, 5.2, 0.8, 6);
  o.box = {5.2, 5.3, 6.1};
  for (auto& p : o.x) {
    p[1] = std::fmod(p[1] * 5.3 / 5.2, 5.3);
    p[2] = std::fmod(p[2] * 6.1 / 5.2, 6.1);
  }
  const Bodies ob = bodies_of(o);
  expect_oracle(ob, forces_of(ob));
}

TEST(Forces, CoulombAgainstOracle) {
  oracle::ForceCase c = uniform(500, 3, 10.0, 0.3, 7);
  std::mt19937_64 rng(8);
  std::uniform_real_distribution<double> u(-0.8, 0.8);
  for (std::size_t i = 0; i < c.x.size(); ++i) c.q.push_back(u(rng));
  c.coulomb = true;
  c.cutoff = 3.0;
  const Bodies b = bodies_of(c);
  const BodyForces f = forces_of(b);
  expect_oracle(b, f);
  expect_zero_net_force(b, f.closest);
  c.box = {10.0, 10.0, 10.0};
  const Bodies p = bodies_of(c);
  expect_oracle(p, forces_of(p));
}

TEST(Forces, PeriodicLatticeEveryBodyTheSameBits) {
  // A simple cubic lattice of spacing 1 in a periodic box, cutoff exactly 2: the pairs at 2 are
  // out (r² < C·C), every body sees the same terms, so the forces are exactly 0 and the energies
  // equal bit for bit.
  oracle::ForceCase c;
  const int m = 8;
  for (int x = 0; x < m; ++x)
    for (int y = 0; y < m; ++y)
      for (int z = 0; z < m; ++z) c.x.push_back({double(x), double(y), double(z)});
  c.box = {double(m), double(m), double(m)};
  c.cutoff = 2.0;
  const Bodies b = bodies_of(c);
  const BodyForces f = forces_of(b);
  expect_oracle(b, f);
  for (std::size_t i = 0; i < c.x.size(); ++i) {
    EXPECT_EQ(f.partners[i], 6u + 12u + 8u);  // r = 1, √2, √3 (r = 2 excluded)
    EXPECT_EQ(f.energy[i], f.energy[0]);
    for (int d = 0; d < 3; ++d) EXPECT_EQ(f.force[i * 3 + d], 0.0);
  }
  EXPECT_EQ(f.closest, 1.0 * std::exp2(-0.0));
}

TEST(Forces, LargeOffsets) {
  oracle::ForceCase c = uniform(300, 3, 8.0, 0.8, 9, 1e6);
  const Bodies b = bodies_of(c);
  const BodyForces f = forces_of(b);
  expect_oracle(b, f);
  expect_zero_net_force(b, f.closest);
}

TEST(Forces, SameBitsOverThreadsPathsAndOrder) {
  oracle::ForceCase c = uniform(800, 3, 10.0, 0.8, 10);
  c.box = {10.0, 10.0, 10.0};
  const Bodies b = bodies_of(c);
  RunOptions one;
  one.threads = 1;
  const BodyForces ref = forces_of(b, one);
  for (int threads : {2, 3}) {
    for (const char* path : {"auto", "grid", "brute"}) {
      RunOptions o;
      o.threads = threads;
      o.path = path;
      const BodyForces f = forces_of(b, o);
      EXPECT_EQ(f.force, ref.force) << threads << " " << path;
      EXPECT_EQ(f.energy, ref.energy) << threads << " " << path;
      EXPECT_EQ(f.total_energy, ref.total_energy);
      EXPECT_EQ(f.virial, ref.virial);
    }
  }
  // The bodies shuffled: each body's result the same bits.
  std::vector<std::size_t> perm(c.x.size());
  std::iota(perm.begin(), perm.end(), 0);
  std::shuffle(perm.begin(), perm.end(), std::mt19937_64(3));
  oracle::ForceCase s = c;
  for (std::size_t k = 0; k < perm.size(); ++k) s.x[k] = c.x[perm[k]];
  const BodyForces f = forces_of(bodies_of(s));
  for (std::size_t k = 0; k < perm.size(); ++k) {
    for (int d = 0; d < 3; ++d) EXPECT_EQ(f.force[k * 3 + d], ref.force[perm[k] * 3 + d]);
    EXPECT_EQ(f.energy[k], ref.energy[perm[k]]);
  }
  EXPECT_EQ(f.total_energy, ref.total_energy);
  EXPECT_EQ(f.virial, ref.virial);
}

template <class F>
void expect_error(ErrorKind kind, const std::string& part, F&& f) {
  try {
    f();
    ADD_FAILURE() << "no error (expected: " << part << ")";
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), kind) << e.what();
    EXPECT_NE(std::string(e.what()).find(part), std::string::npos) << e.what();
  }
}

TEST(Forces, CoincidentBodiesNamed) {
  oracle::ForceCase c = uniform(50, 3, 6.0, 0.8, 12);
  c.x[41] = c.x[6];
  const Bodies b = bodies_of(c);
  expect_error(ErrorKind::Input, "bodies 7 and 42 coincide", [&] { forces_of(b); });
  c.x[41][0] += 1e-14;
  const Bodies near = bodies_of(c);
  expect_error(ErrorKind::Input, "bodies 7 and 42 are", [&] { forces_of(near); });
  // A raw run whose declared closest separation is too large names the pair it meets.
  oracle::ForceCase d = uniform(40, 3, 6.0, 0.8, 13);
  d.x[3] = {1.0, 1.0, 1.0};
  d.x[9] = {1.5, 1.0, 1.0};
  const Bodies db = bodies_of(d);
  RunOptions run;
  run.backend = "cpu";
  expect_error(ErrorKind::Input, "points 4 and 10 are 0.5 apart",
               [&] { twobody::run(forces_statistic(db.options, db.box, 0.7, false), db.points, nullptr, run); });
}

TEST(Forces, BadRequestsRefused) {
  oracle::ForceCase c = uniform(30, 3, 6.0, 0.8, 14);
  c.box = {6, 6, 6};
  Bodies b = bodies_of(c);
  b.options.cutoff = 3.5;
  expect_error(ErrorKind::Config, "exceeds half the periodic box", [&] { forces_of(b); });
  b.options.cutoff = 2.5;
  b.box = Box::from_values(std::vector<double>{6, 6, 6, 90, 90, 60}, 3);
  expect_error(ErrorKind::Config, "triclinic", [&] { forces_of(b); });
  b.box.reset();
  b.options.force.sigma = 0;
  expect_error(ErrorKind::Config, "sigma", [&] { forces_of(b); });
  b.options.force.sigma = 1;
  b.options.force.potential = PairPotential::CoulombSwitched;
  expect_error(ErrorKind::Config, "charge", [&] { forces_of(b); });
  b.options.force.potential = PairPotential::LennardJones;
  b.c.q.assign(30, 1.0);
  expect_error(ErrorKind::Config, "no charges", [&] { forces_of(b); });
  oracle::ForceCase four = uniform(20, 3, 6.0, 0.8, 15);
  for (auto& p : four.x) p.push_back(0.5);
  four.dim = 4;
  expect_error(ErrorKind::Config, "4-D", [&] { forces_of(bodies_of(four)); });
  b = bodies_of(c);
  b.c.x[0][0] = 7.0;
  b = bodies_of(b.c);
  expect_error(ErrorKind::Input, "outside the periodic box", [&] { forces_of(b); });
}

}  // namespace

#include "test_support.hpp"

namespace {

// Split over simulated devices (each the CPU backend on one thread: the pair jobs, their cross
// pieces and merge_piece as on GPUs), auto and cross: the plain run's integers, bit for bit.
TEST(Forces, SplitOverDevicesMergesTheSameBits) {
  oracle::ForceCase c = uniform(700, 3, 10.0, 0.8, 16);
  c.box = {10.0, 10.0, 10.0};
  std::mt19937_64 rng(17);
  std::uniform_real_distribution<double> u(-1, 1);
  for (std::size_t i = 0; i < c.x.size(); ++i) c.q.push_back(u(rng));
  for (bool coulomb : {false, true}) {
    Bodies b = bodies_of(c);
    b.options.force.potential = coulomb ? PairPotential::CoulombSwitched : PairPotential::LennardJones;
    PointSet p = b.points;
    if (coulomb) p.set_weights(b.c.q);
    const Statistic s = forces_statistic(b.options, b.box, 0.05, coulomb);
    RunOptions plain;
    plain.backend = "cpu";
    plain.threads = 2;
    const Result one = twobody::run(s, p, nullptr, plain);
    const testing_support::ScopedEnv simulated("TWOBODY_SIMULATED_DEVICES", "3");
    RunOptions split;
    split.devices = {0, 1, 2};
    const Result many = twobody::run(s, p, nullptr, split);
    EXPECT_NE(many.info.plan.find("devices: 3 devices"), std::string::npos) << many.info.plan;
    EXPECT_TRUE(many.exact.point_sums_a == one.exact.point_sums_a);
    EXPECT_TRUE(many.exact.totals == one.exact.totals);
    EXPECT_EQ(many.per_point_a.sums, one.per_point_a.sums);
    EXPECT_EQ(many.per_point_a.counts, one.per_point_a.counts);
    EXPECT_EQ(many.totals, one.totals);
  }
  // Cross: the second set's forces are the reactions.
  oracle::ForceCase d = uniform(300, 3, 10.0, 0.8, 18);
  Statistic s = forces_statistic(bodies_of(c).options, Box::cube(3, 10.0), 1e-4, false);
  s.traversal = Traversal::Cross;
  const Bodies a = bodies_of(c), bb = bodies_of(d);
  RunOptions plain;
  plain.backend = "cpu";
  const Result one = twobody::run(s, a.points, &bb.points, plain);
  WideSum net;
  for (std::size_t k = 0; k < one.exact.point_sums_a.size(); k += 4) net += one.exact.point_sums_a[k];
  for (std::size_t k = 0; k < one.exact.point_sums_b.size(); k += 4) net += one.exact.point_sums_b[k];
  EXPECT_TRUE(net == WideSum{});
  const testing_support::ScopedEnv simulated("TWOBODY_SIMULATED_DEVICES", "3");
  RunOptions split;
  split.devices = {0, 1, 2};
  const Result many = twobody::run(s, a.points, &bb.points, split);
  EXPECT_TRUE(many.exact.point_sums_a == one.exact.point_sums_a);
  EXPECT_TRUE(many.exact.point_sums_b == one.exact.point_sums_b);
  EXPECT_EQ(many.per_point_b.sums, one.per_point_b.sums);
  EXPECT_EQ(many.totals, one.totals);
}

}  // namespace

namespace {

// The 192-bit sums: any integer-valued double below 2^190 exactly, additions with carries across
// both words, negation, and the value correctly rounded (against long double and exact cases).
TEST(Forces, WideSumsExact) {
  std::mt19937_64 rng(19);
  for (int trial = 0; trial < 20000; ++trial) {
    const int e = static_cast<int>(rng() % 180);
    const double a = std::ldexp(static_cast<double>(rng() >> 11), e - 53 + 1);
    const double b = std::ldexp(static_cast<double>(rng() >> 11), static_cast<int>(rng() % 120) - 52);
    const double ai = std::nearbyint(a), bi = std::nearbyint(b);
    WideSum s = WideSum::of_integer(ai);
    EXPECT_EQ(s.value(0), ai);
    EXPECT_EQ((-s).value(0), -ai);
    s += -WideSum::of_integer(bi);
    s += WideSum::of_integer(bi);
    EXPECT_TRUE(s == WideSum::of_integer(ai));
    WideSum t = WideSum::of_integer(ai);
    t += WideSum::of_integer(-bi);
    // a - b rounded once: exact in long double when the exponents are close, else one of them.
    const long double exact = static_cast<long double>(ai) - static_cast<long double>(bi);
    // (zero first: ilogb(0) is INT_MIN, and the difference would overflow)
    if (ai == 0 || bi == 0 || std::abs(std::ilogb(ai) - std::ilogb(bi)) < 10)
      EXPECT_EQ(t.value(0), static_cast<double>(exact)) << ai << " " << bi;
    EXPECT_EQ(t.value(-10), std::ldexp(t.value(0), -10));
  }
  // Carries: 2^128 - 1 + 1, and back.
  WideSum c;
  c.add(-1);
  EXPECT_EQ(c.value(0), -1.0);
  c += WideSum::of_integer(0x1p130);
  EXPECT_EQ(c.value(0), 0x1p130);
  c.add(1);
  EXPECT_TRUE(c == WideSum::of_integer(0x1p130));
  // A tie past 64 bits goes to even; the sticky bit breaks it.
  WideSum tie = WideSum::of_integer(0x1p100);
  tie += WideSum::of_integer(0x1p47);  // exactly half an ulp of 2^100
  EXPECT_EQ(tie.value(0), 0x1p100);
  tie.add(1);
  EXPECT_EQ(tie.value(0), 0x1p100 + 0x1p48);
}

}  // namespace

namespace {

// One close contact (0.02 sigma: a force of ~10^24) does not coarsen the other bodies' sums: the
// grid keeps 62 bits of the ordinary pairs' terms, the 192-bit sums hold the contact's.
TEST(Forces, CloseContactKeepsTheOthersPrecise) {
  oracle::ForceCase c = uniform(400, 3, 9.0, 0.8, 20);
  c.x.push_back({c.x[0][0] + 0.02, c.x[0][1], c.x[0][2]});
  const Bodies b = bodies_of(c);
  const BodyForces f = forces_of(b);
  EXPECT_LT(f.closest, 0.021);
  EXPECT_GT(f.fine, 0.6);
  expect_oracle(b, f);
  expect_zero_net_force(b, f.closest, f.fine);
  EXPECT_GT(std::fabs(f.force[0]), 1e20);
  EXPECT_EQ(f.force[0], -f.force[400 * 3]);  // the contact's pair dominates both
}

}  // namespace
