// The float32 screen of the GPU's lattice gather (engine/lattice_screen.hpp) against the float64
// rule: every (source, node) pair it decides, it decides as the rule does, and for a pair it keeps
// its float32 squares are the single-precision term's, bit for bit; most pairs are decided. Every
// node of small lattices against every source: near and far pairs, sources on nodes, at the cutoff
// and the exclusion radius exactly, far images of periodic axes, offsets up to 2^40.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <random>
#include <vector>

#include "twobody/detail/engine/lattice_bins.hpp"
#include "twobody/detail/engine/lattice_plan.hpp"
#include "twobody/detail/engine/lattice_screen.hpp"
#include "twobody/lattice.hpp"
#include "twobody/points.hpp"

namespace {

using namespace twobody;
using lattice::Screened;

constexpr int kTile = lattice::kTileNodes;  // the gather's tile

struct RuleDecision {
  bool keep = false, excluded = false;
  float sq[3] = {0, 0, 0};
};

// The rule, written from docs/exactness.md ("Lattices") as the CPU traversal applies it.
RuleDecision rule(const Lattice& L, const LatticeFunction& fn, const lattice::Source& s, const std::int64_t (&i)[3]) {
  RuleDecision r;
  double d[3] = {0, 0, 0};
  std::int64_t m[3] = {0, 0, 0};
  bool near = true;
  for (int k = 0; k < L.dim; ++k) {
    double dk = s.x[k] - L.node(k, i[k]);
    std::int64_t w = 0;
    if (L.periodic[k]) {
      const double wd = std::nearbyint(dk / L.period(k));
      if (wd != 0) {
        dk = dk - wd * L.period(k);
        w = static_cast<std::int64_t>(wd);
      }
    }
    d[k] = dk;
    m[k] = i[k] + w * L.shape[k] - s.b[k];
    near = near && std::fabs(dk) < fn.cutoff;
  }
  if (!near) return r;
  double r2 = d[0] * d[0] + d[1] * d[1];
  if (L.dim == 3) r2 = r2 + d[2] * d[2];
  if (fn.support == Support::Ball && !(r2 < fn.cutoff * fn.cutoff)) return r;
  if (fn.kind == LatticeKernel::CoulombSwitched && r2 < fn.exclusion * fn.exclusion) {
    r.excluded = true;
    return r;
  }
  r.keep = true;
  for (int k = 0; k < L.dim; ++k) {
    const float D = s.f[k] - static_cast<float>(m[k]);
    const float dk = D * static_cast<float>(L.spacing[k]);
    r.sq[k] = dk * dk;
  }
  return r;
}

struct Tally {
  std::uint64_t pairs = 0, decided = 0, kept = 0;
};

// Every source against every node, each from its tile's view; EXPECTs on every decision.
Tally check_every_pair(const reduce::OntoLattice& stat, const PointSet& points, const std::vector<double>& radius,
                       const char* what) {
  LatticeSources src;
  src.points = &points;
  src.radius = radius;
  const LatticePlan plan = make_lattice_plan(stat, src, RunOptions{});
  const lattice::Binned bins = lattice::bin_sources(plan);
  const lattice::PairScreen screen = lattice::make_pair_screen(plan, kTile);
  const Lattice& L = stat.lattice;
  Tally t;
  int reported = 0;
  for (const lattice::Source& s : bins.sources) {
    const float f[3] = {s.f[0], s.f[1], s.f[2]};
    const std::int64_t b[3] = {s.b[0], s.b[1], s.b[2]};
    const std::int64_t shape[3] = {L.shape[0], L.shape[1], L.shape[2]};
    const bool periodic[3] = {L.periodic[0], L.periodic[1], L.periodic[2]};
    for (std::int64_t z = 0; z < L.shape[2]; ++z)
      for (std::int64_t y = 0; y < L.shape[1]; ++y)
        for (std::int64_t x = 0; x < L.shape[0]; ++x) {
          const std::int64_t i[3] = {x, y, z};
          const std::int64_t tile0[3] = {x / kTile * kTile, y / kTile * kTile, z / kTile * kTile};
          const lattice::TileSource ts = lattice::tile_source(f, b, tile0, shape, periodic, L.dim, kTile);
          const float j[3] = {static_cast<float>(x - tile0[0]), static_cast<float>(y - tile0[1]),
                              static_cast<float>(z - tile0[2])};
          float sq[3], r2;
          const Screened v = lattice::screen_pair(screen, ts, j, sq, r2);
          const RuleDecision want = rule(L, stat.function, s, i);
          ++t.pairs;
          t.kept += want.keep;
          if (v == Screened::Rule) continue;
          ++t.decided;
          bool ok = true;
          if (v == Screened::Out) ok = !want.keep && !want.excluded;
          if (v == Screened::Excluded) ok = want.excluded;
          if (v == Screened::In) ok = want.keep && std::memcmp(sq, want.sq, sizeof sq) == 0;
          if (!ok && reported++ < 5)
            ADD_FAILURE() << what << ": source (" << s.x[0] << ", " << s.x[1] << ", " << s.x[2] << "), node (" << x << ", "
                          << y << ", " << z << "): screen " << static_cast<int>(v) << ", rule keeps " << want.keep
                          << " excludes " << want.excluded;
        }
  }
  EXPECT_EQ(reported, 0) << what;
  return t;
}

reduce::OntoLattice make_stat(LatticeKernel kind, Support support, int dim, double h, std::int64_t n, double cutoff,
                              double origin, bool periodic) {
  reduce::OntoLattice stat;
  stat.lattice.dim = dim;
  for (int k = 0; k < 3; ++k) {
    stat.lattice.spacing[k] = k < dim ? h * (1 + 0.125 * k) : 1.0;
    stat.lattice.shape[k] = k < dim ? n + k : 1;
    stat.lattice.origin[k] = k < dim ? origin - 0.37 * k : 0.0;
    stat.lattice.periodic[k] = k < dim && periodic;
  }
  stat.function.kind = kind;
  stat.function.support = support;
  stat.function.cutoff = cutoff;
  stat.function.exclusion = kind == LatticeKernel::CoulombSwitched ? 0.75 * h : 0.0;
  stat.function.blobbiness = 1.5;
  stat.function.beta = 5;
  return stat;
}

// Random sources over the lattice and a margin around it, plus the adversarial ones: on nodes, at
// exactly the cutoff and the exclusion radius from a node along an axis, far images.
PointSet sources_for(const reduce::OntoLattice& stat, std::size_t n, unsigned seed) {
  const Lattice& L = stat.lattice;
  std::mt19937_64 rng(seed);
  std::vector<std::vector<double>> x(static_cast<std::size_t>(L.dim));
  std::normal_distribution<double> normal;
  for (std::size_t p = 0; p < n; ++p) {
    const int kind = static_cast<int>(p % 7);
    std::int64_t node[3];
    for (int k = 0; k < L.dim; ++k) node[k] = static_cast<std::int64_t>(rng() % static_cast<std::uint64_t>(L.shape[k]));
    // Within a few float32 roundings of the cutoff (kind 5) or the exclusion radius (kind 6) of a
    // node, in a random direction (along one axis for the separable support): where float32 and
    // float64 disagree.
    double u[3] = {0, 0, 0}, norm = 0;
    for (int k = 0; k < L.dim; ++k) {
      u[k] = stat.function.support == Support::Box ? (k == 0 ? 1.0 : 0.1 * normal(rng)) : normal(rng);
      norm += u[k] * u[k];
    }
    const double radius = (kind == 6 ? stat.function.exclusion : stat.function.cutoff) *
                          (1 + 1e-7 * std::uniform_real_distribution<double>(-1, 1)(rng));
    for (int k = 0; k < L.dim; ++k) {
      const double lo = L.origin[k] - stat.function.cutoff, span = L.period(k) + 2 * stat.function.cutoff;
      double v = lo + span * std::uniform_real_distribution<double>(0, 1)(rng);
      if (kind == 1) v = L.node(k, node[k]);                                                   // on a node
      if (kind == 2) v = L.node(k, node[k]) + (k == 0 ? stat.function.cutoff : 0.0);           // at the cutoff
      if (kind == 3) v = L.node(k, node[k]) + (k == 1 ? stat.function.exclusion : 0.0);        // at the exclusion
      if (kind == 4 && L.periodic[k]) v += static_cast<double>(static_cast<int>(rng() % 7) - 3) * L.period(k);  // far images
      if (kind == 5 || (kind == 6 && stat.function.exclusion > 0))
        v = L.node(k, node[k]) + radius * u[k] / (stat.function.support == Support::Box ? std::fabs(u[0]) : std::sqrt(norm));
      x[static_cast<std::size_t>(k)].push_back(v);
    }
  }
  return PointSet::from_columns(x);
}

TEST(LatticeScreen, EveryDecidedPairIsTheRulesAndMostAreDecided) {
  struct Config {
    const char* what;
    LatticeKernel kind;
    Support support;
    int dim;
    double h;
    std::int64_t n;
    double cutoff, origin;
    bool periodic;
  };
  const Config configs[] = {
      {"coulomb, open", LatticeKernel::CoulombSwitched, Support::Ball, 3, 0.5, 21, 2.5, 3.0, false},
      {"coulomb, periodic, offset 10^6", LatticeKernel::CoulombSwitched, Support::Ball, 3, 0.5, 24, 2.0, 1e6, true},
      {"blinn, open, offset -2^30", LatticeKernel::BlinnBlob, Support::Ball, 3, 0.25, 19, 1.1, -0x1p30, false},
      {"kaiser-bessel separable, periodic", LatticeKernel::KaiserBessel, Support::Box, 3, 1.0, 22, 2.0, -11.0, true},
      {"kaiser-bessel radial, 2-D periodic", LatticeKernel::KaiserBessel, Support::Ball, 2, 1.0, 40, 3.0, -20.0, true},
      {"coulomb, 2-D, cutoff a multiple of the spacing", LatticeKernel::CoulombSwitched, Support::Ball, 2, 0.5, 37, 4.0, 0.0, false},
  };
  for (const Config& c : configs) {
    const reduce::OntoLattice stat = make_stat(c.kind, c.support, c.dim, c.h, c.n, c.cutoff, c.origin, c.periodic);
    const PointSet points = sources_for(stat, c.dim == 3 ? 60 : 400, 7);
    const std::vector<double> radius(c.kind == LatticeKernel::BlinnBlob ? points.size() : 0, 0.8);
    const Tally t = check_every_pair(stat, points, radius, c.what);
    EXPECT_GT(t.kept, 100u) << c.what;
    // The margins are a few parts in 10^6 of the cutoff: all but a few pairs decided.
    EXPECT_GT(static_cast<double>(t.decided), 0.995 * static_cast<double>(t.pairs)) << c.what;
  }
}

TEST(LatticeBins, TheSortIsAStableSortBySourceBin) {
  // bin_sources against a serial stable counting sort by each source's bin (AxisBins::bin_of), at
  // 1, 2 and 5 threads: a lattice whose bins need three radix passes (over 2^22 of them), sources
  // outside it (dropped), duplicates, and bins left empty.
  reduce::OntoLattice stat = make_stat(LatticeKernel::KaiserBessel, Support::Box, 3, 1.0, 160, 2.0, -80.0, true);
  PointSet points = sources_for(stat, 3000, 11);
  std::vector<std::vector<double>> x(3);
  for (int k = 0; k < 3; ++k) {
    x[static_cast<std::size_t>(k)].assign(points.coord(k).begin(), points.coord(k).end());
    x[static_cast<std::size_t>(k)].insert(x[static_cast<std::size_t>(k)].end(), points.coord(k).begin(), points.coord(k).begin() + 500);
    for (int i = 0; i < 50; ++i) x[static_cast<std::size_t>(k)].push_back(stat.lattice.origin[k] - 500.0 - i);  // far away
  }
  points = PointSet::from_columns(x);
  LatticeSources src;
  src.points = &points;
  for (bool periodic : {true, false}) {
    for (int k = 0; k < 3; ++k) stat.lattice.periodic[k] = periodic;
    for (int threads : {1, 2, 5}) {
      RunOptions o;
      o.threads = threads;
      const LatticePlan plan = make_lattice_plan(stat, src, o);
      const lattice::Binned bins = lattice::bin_sources(plan);
      std::vector<std::vector<std::size_t>> want(bins.start.size() - 1);
      for (std::size_t i = 0; i < points.size(); ++i) {
        std::int64_t b[3];
        bool keep = true;
        for (int k = 0; k < 3; ++k) {
          b[k] = bins.axis[k].bin_of((points.coord(k)[i] - stat.lattice.origin[k]) / stat.lattice.spacing[k]);
          keep = keep && b[k] >= 0;
        }
        if (keep) want[bins.bin_id(b[0], b[1], b[2])].push_back(i);
      }
      std::size_t at = 0;
      for (std::size_t b = 0; b < want.size(); ++b) {
        ASSERT_EQ(bins.start[b], at) << "bin " << b;
        for (const std::size_t i : want[b]) {
          ASSERT_LT(at, bins.sources.size());
          for (int k = 0; k < 3; ++k) ASSERT_EQ(bins.sources[at].x[k], points.coord(k)[i]) << "bin " << b << ", source " << i;
          ++at;
        }
      }
      EXPECT_EQ(bins.start.back(), at);
      EXPECT_EQ(bins.sources.size(), at);
      if (!periodic) EXPECT_LT(at, points.size()) << "some sources lie beyond the reach of an open lattice";
      if (periodic) EXPECT_EQ(at, points.size());
    }
  }
}

TEST(LatticeScreen, ItStandsAsideWhereItCannotDecide) {
  // A period of less than 2(C + 6h): one image per tile is not enough.
  const reduce::OntoLattice tight = make_stat(LatticeKernel::KaiserBessel, Support::Box, 3, 1.0, 12, 3.0, 0.0, true);
  const PointSet points = sources_for(tight, 40, 3);
  LatticeSources src;
  src.points = &points;
  const LatticePlan plan = make_lattice_plan(tight, src, RunOptions{});
  EXPECT_FALSE(lattice::make_pair_screen(plan, kTile).on);
  const Tally t = check_every_pair(tight, points, {}, "short period");
  EXPECT_EQ(t.decided, 0u);
  // Coordinates of 2^40 with a spacing of 2^-8: float64 itself resolves a displacement only to
  // ~2^-12, so the margins would swallow the cutoff and the screen stands aside; at 2^30 with a
  // spacing of 2^-4 they are still small. Every decided pair the rule's.
  const reduce::OntoLattice far = make_stat(LatticeKernel::CoulombSwitched, Support::Ball, 3, 0x1p-8, 17, 0.02, 0x1p40, false);
  const PointSet far_points = sources_for(far, 60, 5);
  src.points = &far_points;
  EXPECT_FALSE(lattice::make_pair_screen(make_lattice_plan(far, src, RunOptions{}), kTile).on);
  check_every_pair(far, far_points, {}, "offset 2^40");
  const reduce::OntoLattice big = make_stat(LatticeKernel::CoulombSwitched, Support::Ball, 3, 0x1p-4, 17, 0.5, 0x1p30, false);
  const PointSet big_points = sources_for(big, 60, 6);
  const Tally t30 = check_every_pair(big, big_points, {}, "offset 2^30");
  EXPECT_GT(static_cast<double>(t30.decided), 0.99 * static_cast<double>(t30.pairs));
}

}  // namespace
