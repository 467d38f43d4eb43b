// The CPU grid path (compact cell index, half-shell traversal) against the float64 oracle: open and
// periodic boxes, auto and cross, clustered and lattice data, rmax up to half the box (fewer than
// 2·refine + 1 cells per side), weights, counts and pair lists.
#include <algorithm>
#include <numeric>

#include <gtest/gtest.h>

#include "test_support.hpp"
#include "twobody/engine.hpp"
#include "twobody/generate.hpp"
#include "twobody/statistics.hpp"
#include "twobody/detail/cpu/grid_index.hpp"

using namespace twobody;
using testing_support::fresh_seed;
using testing_support::to_oracle;
using testing_support::to_pointset;

namespace {

RunOptions on_cpu() {
  RunOptions o;
  o.backend = "cpu";
  return o;
}


Statistic stat(Traversal t, const Binning& b, std::optional<Box> box, OutputKind out = OutputKind::Histogram,
               bool weighted = false) {
  Statistic s;
  s.traversal = t;
  s.metric = box ? Metric::Periodic : Metric::Euclidean;
  if (box) s.box = *box;
  s.reduction = testing_support::reduction_of(out, b);
  s.weighted = weighted;
  return s;
}

void expect_grid(const Result& r) { EXPECT_NE(r.info.plan.find("cpu path: grid"), std::string::npos) << r.info.plan; }

}  // namespace

TEST(Grid, PeriodicAutoAndCrossEqualOracleForManyRmax) {
  const double L = 100.0;
  const auto seed = fresh_seed();
  SCOPED_TRACE("seed " + std::to_string(seed));
  PointSet a = generate_clustered_box(4000, 3, L, ClusterOptions{}, seed);
  PointSet b = generate_uniform_box(2500, 3, L, seed + 1);
  const auto oa = to_oracle(a), ob = to_oracle(b);
  for (double rmax : {3.0, 11.0, 24.0, 50.0}) {
    SCOPED_TRACE("rmax " + std::to_string(rmax));
    const Binning bins = Binning::logarithmic(0.5, rmax, 9);
    // The grid path itself (the cost model may prefer brute force for some clustered seeds).
    RunOptions grid = on_cpu();
    grid.path = "grid";
    const auto ra = run(stat(Traversal::Auto, bins, Box::cube(3, L)), a, nullptr, grid);
    EXPECT_EQ(ra.counts, oracle::histogram(oa, nullptr, bins.edges(), 1, {L, L, L}).counts);
    const auto rc = run(stat(Traversal::Cross, bins, Box::cube(3, L)), a, &b, grid);
    EXPECT_EQ(rc.counts, oracle::histogram(oa, &ob, bins.edges(), 1, {L, L, L}).counts);
    expect_grid(ra);
    expect_grid(rc);
  }
}

TEST(Grid, OpenSpaceWeightedClustered) {
  const auto seed = fresh_seed();
  ClusterOptions c;
  c.kind = ClusterOptions::Kind::GaussianBlobs;
  c.blobs = 5;
  c.sigma = 0.01;
  PointSet a = generate_clustered_box(5000, 3, 10.0, c, seed);
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<double> uw(0.5, 2.0);
  std::vector<double> w(a.size());
  for (auto& x : w) x = uw(rng);
  a.set_weights(w);
  const auto oa = to_oracle(a);
  const Binning bins = Binning::linear(0.0, 0.3, 6);
  const auto r = run(stat(Traversal::Auto, bins, std::nullopt, OutputKind::Histogram, true), a, nullptr, on_cpu());
  const auto o = oracle::histogram(oa, nullptr, bins.edges(), 0, {}, true);
  expect_grid(r);
  EXPECT_EQ(r.counts, o.counts);
  for (std::size_t k = 0; k < o.weighted.size(); ++k) EXPECT_NEAR(r.weighted[k], o.weighted[k], 1e-9 * (1 + o.weighted[k]));
}

TEST(Grid, LatticeOnEdgesOpenAndPeriodic) {
  PointSet p(2, 0);
  for (int x = 0; x < 60; ++x)
    for (int y = 0; y < 50; ++y) p.push_back(std::vector<double>{double(x), double(y)});
  const Binning bins = Binning::linear(0.0, 4.0, 4);
  const auto r = run(stat(Traversal::Auto, bins, std::nullopt), p, nullptr, on_cpu());
  expect_grid(r);
  EXPECT_EQ(r.counts, oracle::histogram(to_oracle(p), nullptr, bins.edges(), 0).counts);
  const auto rp = run(stat(Traversal::Auto, bins, Box::from_lengths(std::vector<double>{60, 50})), p, nullptr, on_cpu());
  EXPECT_EQ(rp.counts, oracle::histogram(to_oracle(p), nullptr, bins.edges(), 1, {60, 50}).counts);
}

TEST(Grid, PairListsAndCountsKeepCallerIndices) {
  const auto seed = fresh_seed();
  PointSet a = generate_uniform_box(6000, 3, 50.0, seed);
  PointSet b = generate_uniform_box(3000, 3, 50.0, seed + 7);
  const auto oa = to_oracle(a), ob = to_oracle(b);
  const Binning range = Binning::from_edges({0.0, 2.0});
  for (bool cross : {false, true}) {
    auto s = stat(cross ? Traversal::Cross : Traversal::Auto, range, Box::cube(3, 50.0), OutputKind::PairList);
    const auto r = run(s, a, cross ? &b : nullptr, on_cpu());
    expect_grid(r);
    std::size_t expected = 0;
    for (std::size_t i = 0; i < oa.x.size(); ++i)
      for (std::size_t j = cross ? 0 : i + 1; j < (cross ? ob.x.size() : oa.x.size()); ++j)
        if (oracle::d2_periodic(oa.x[i], cross ? ob.x[j] : oa.x[j], {50, 50, 50}) < 4.0) ++expected;
    ASSERT_EQ(r.pairs.size(), expected);
    for (const auto& p : r.pairs) {
      if (!cross) ASSERT_LT(p.i, p.j);
      const double d2 = oracle::d2_periodic(oa.x[p.i], cross ? ob.x[p.j] : oa.x[p.j], {50, 50, 50});
      ASSERT_LT(d2, 4.0);
      ASSERT_DOUBLE_EQ(p.value, std::sqrt(d2));
    }
    s.reduction = reduce::Count{s.binning()};
    EXPECT_EQ(run(s, a, cross ? &b : nullptr, on_cpu()).counts[0], expected);
  }
}

TEST(Grid, BruteForceWhenTheCutoffSpansTheData) {
  const auto p = generate_uniform_box(3000, 3, 10.0, fresh_seed());
  const auto r = run(stat(Traversal::Auto, Binning::linear(0.0, 20.0, 4), std::nullopt), p, nullptr, on_cpu());
  EXPECT_NE(r.info.plan.find("cpu path: brute force"), std::string::npos) << r.info.plan;
  EXPECT_EQ(r.counts[0] + r.counts[1] + r.counts[2] + r.counts[3], 3000u * 2999u / 2);
}

// The windowed traversal (GridWindows) against a float64 brute force, block by block: for every
// block and anchor, no partner of the block closer than r_max lies outside the anchor's window,
// and the pairs closer than r_max inside the windows are every such pair of the set, once. The
// cases stress what the windows' arithmetic rests on: exactly 2·refine + 1 cells along an axis
// (neighbour runs that cross the periodic wrap), few and many slices, points exactly on cell and
// slice boundaries, at 0 and just below L, clustered points, open and periodic, auto and cross,
// 1 to 4 dimensions.
namespace {

struct WindowCase {
  std::string name;
  PointSet a, b;
  std::vector<double> box;  // empty: open space
  double rmax;
  int refine;
  int slices;  // at most, a cell
};

template <int D>
void expect_windows_conservative(const WindowCase& c, bool cross) {
  using namespace twobody::cpu;
  SCOPED_TRACE(c.name + (cross ? " cross" : " auto") + " refine " + std::to_string(c.refine) + " slices " +
               std::to_string(c.slices));
  const PointSet& pb = cross ? c.b : c.a;
  const Box box = c.box.empty() ? Box{} : Box::from_lengths(c.box);
  const GridGeometry g = make_grid_geometry(c.a, pb, c.rmax, c.box.empty() ? nullptr : &box, c.refine, 1 << 20);
  const GridIndex A(c.a, g, c.slices);
  const std::unique_ptr<GridIndex> B = cross ? std::make_unique<GridIndex>(pb, g, c.slices) : nullptr;
  const GridIndex& partners = cross ? *B : A;
  const GridPlan plan = plan_grid(g, A, partners, !cross);
  bool expect_windowed = true;
  if (!c.box.empty())
    for (int d = 0; d < D; ++d) expect_windowed = expect_windowed && g.cells[d] >= 2 * g.refine + 1;
  ASSERT_EQ(plan.windowed, expect_windowed);
  if (!plan.windowed) return;
  const SoaView<D> va(A.sorted), vb(partners.sorted);
  const GridWindows<D> windows(g, plan, partners, va, c.rmax);
  const double r2 = c.rmax * c.rmax;
  const auto d2 = [&](std::size_t i, std::size_t j) {
    double s = 0;
    for (int d = 0; d < D; ++d) {
      double dx = va.x[d][i] - vb.x[d][j];
      if (!c.box.empty()) {
        if (dx > c.box[d] / 2) dx -= c.box[d];
        if (dx < -c.box[d] / 2) dx += c.box[d];
      }
      s += dx * dx;
    }
    return s;
  };
  std::uint64_t found = 0, dropped = 0;
  std::uint64_t beyond = 0;
  for (std::size_t k = 0; k < plan.unit_count(); ++k) {
    windows.for_each(k, [&](const GridBlock<D>& b) {
      for (std::size_t i = b.a0; i < b.a1; ++i) {
        const auto [j0, j1] = windows(b, i);
        beyond += j1 > b.b1;
        for (std::size_t j = b.triangle ? i + 1 : b.b0; j < b.b1; ++j) {
          if (d2(i, j) >= r2) continue;
          if (j >= j0 && j < j1) ++found;
          else ++dropped;
        }
      }
    });
  }
  EXPECT_EQ(beyond, 0u);
  EXPECT_EQ(dropped, 0u);
  std::uint64_t expected = 0;
  for (std::size_t i = 0; i < va.n; ++i)
    for (std::size_t j = cross ? 0 : i + 1; j < vb.n; ++j) expected += d2(i, j) < r2;
  EXPECT_EQ(found, expected);
  EXPECT_GT(expected, 0u);
}

// Points of a lattice of `step` from 0 (cell and slice boundaries when the widths are multiples
// of it), plus points at 0 and just below each side.
PointSet lattice_with_edges(int dim, const std::vector<double>& side, double step) {
  PointSet p(dim, 0);
  std::vector<int> n(dim), k(dim, 0);
  for (int d = 0; d < dim; ++d) n[d] = static_cast<int>(std::ceil(side[d] / step));
  for (;;) {
    std::vector<double> x(dim);
    for (int d = 0; d < dim; ++d) x[d] = std::min(k[d] * step, std::nextafter(side[d], 0.0));
    p.push_back(x);
    int d = dim - 1;
    while (d >= 0 && ++k[d] == n[d]) k[d--] = 0;
    if (d < 0) break;
  }
  std::vector<double> lo(dim, 0.0), hi(dim);
  for (int d = 0; d < dim; ++d) hi[d] = std::nextafter(side[d], 0.0);
  p.push_back(lo);
  p.push_back(hi);
  return p;
}

PointSet scaled(const oracle::Points& u, const std::vector<double>& side) {
  PointSet p = to_pointset(u);
  for (int d = 0; d < p.dim(); ++d)
    for (auto& x : p.coord(d)) x = std::min(x * side[d], std::nextafter(side[d], 0.0));
  return p;
}

template <int D>
void expect_windows_for(const std::vector<double>& side, double rmax, std::mt19937_64& rng, std::uint64_t seed) {
  std::vector<WindowCase> cases;
  const PointSet ua = scaled(testing_support::uniform_points(700, D, 0, 1, rng), side);
  const PointSet ub = scaled(testing_support::uniform_points(400, D, 0, 1, rng), side);
  // A lattice whose step divides many of the cell and slice widths below (2.5, 1.25, 0.3125, ...).
  const PointSet lat = lattice_with_edges(D, side, D >= 4 ? 2.5 : D == 3 ? 0.625 : 0.3125);
  ClusterOptions blobs;
  blobs.kind = ClusterOptions::Kind::GaussianBlobs;
  blobs.blobs = 3;
  blobs.sigma = 0.03;
  const PointSet clustered = generate_clustered_box(900, D, side[0], blobs, seed);
  for (bool periodic : {true, false}) {
    const std::vector<double> box = periodic ? side : std::vector<double>{};
    for (int refine : {1, 2, 3})
      for (int slices : {1, 3, 8, 64}) {
        cases.push_back({"uniform", ua, ub, box, rmax, refine, slices});
        cases.push_back({"lattice", lat, ua, box, rmax, refine, slices});
        cases.push_back({"clustered", clustered, ub, box, rmax, refine, slices});
      }
  }
  for (const auto& c : cases) {
    SCOPED_TRACE(std::string(c.box.empty() ? "open " : "periodic ") + "rmax " + std::to_string(c.rmax));
    expect_windows_conservative<D>(c, false);
    expect_windows_conservative<D>(c, true);
  }
}

}  // namespace

TEST(Grid, WindowsKeepEveryPairWithinRmax) {
  const auto seed = fresh_seed();
  SCOPED_TRACE("seed " + std::to_string(seed));
  std::mt19937_64 rng(seed);
  // Side 10 (cubic sides, for the clustered generator): r_max 3.2 gives 3 cells of refine 1 and
  // 6 of refine 2; 3.9 gives 2 and 5 (exactly 2·refine + 1); 2.4 gives 4 and 8; 4.99 (close to
  // L/2) gives 2 and 4, which the windows decline (the plain blocks serve them).
  for (double rmax : {3.2, 3.9, 2.4, 4.99, 1.1}) {
    SCOPED_TRACE("rmax " + std::to_string(rmax));
    expect_windows_for<3>({10, 10, 10}, rmax, rng, seed);
    expect_windows_for<2>({10, 10}, rmax, rng, seed + 1);
    expect_windows_for<1>({10}, rmax, rng, seed + 2);
  }
  expect_windows_for<4>({10, 10, 10, 10}, 3.2, rng, seed + 3);
}

// The cell index itself against an independent one (std::stable_sort of the points by cell, then
// slice, with the slice rule the windows assume): the same permutation, cell starts, slices and
// sorted coordinates and weights, whatever the number of threads, for grids of one block of cells
// and of many (the sort's two passes), uniform, clustered (a cell of thousands), duplicates and
// points on every cell edge.
namespace {

void expect_index_equals_reference(const PointSet& p, double rmax, const Box* box, std::int64_t max_cells) {
  using namespace twobody::cpu;
  const GridGeometry g = make_grid_geometry(p, p, rmax, box, 1, max_cells, true);
  SCOPED_TRACE("cells " + std::to_string(g.total) + ", points " + std::to_string(p.size()));
  const int last = p.dim() - 1;
  const std::size_t n = p.size();
  std::vector<std::int64_t> cell(n);
  std::vector<std::uint32_t> count(static_cast<std::size_t>(g.total), 0);
  for (std::size_t i = 0; i < n; ++i) ++count[static_cast<std::size_t>(cell[i] = g.cell_of(p, i))];
  constexpr int kSlices = 64;
  const auto slices = [&](std::int64_t c) { return std::clamp<std::uint32_t>(count[c] / 2, 1, kSlices); };
  std::vector<std::uint32_t> slice(n, 0);
  for (std::size_t i = 0; i < n; ++i) {
    const std::uint32_t S = slices(cell[i]);
    if (S == 1) continue;
    const double zc = static_cast<double>(cell[i] % g.cells[last]);
    const double f = ((p.coord(last)[i] - g.origin[last]) / g.width[last] - zc) * S;
    slice[i] = static_cast<std::uint32_t>(std::clamp(std::floor(f), 0.0, static_cast<double>(S - 1)));
  }
  std::vector<std::uint32_t> order(n);
  std::iota(order.begin(), order.end(), 0u);
  std::stable_sort(order.begin(), order.end(), [&](std::uint32_t x, std::uint32_t y) {
    return std::pair{cell[x], slice[x]} < std::pair{cell[y], slice[y]};
  });
  for (int threads : {1, 2, 3, 7}) {
    SCOPED_TRACE("threads " + std::to_string(threads));
    const GridIndex index(p, g, kSlices, threads);
    ASSERT_EQ(index.order, order);
    std::uint32_t at = 0, first_slice = 0;
    for (std::int64_t c = 0; c < g.total; ++c) {
      ASSERT_EQ(index.start[c], at);
      ASSERT_EQ(index.slice_first[c], first_slice);
      ASSERT_EQ(index.slices(c), slices(c));
      for (std::uint32_t s = 0; s < slices(c); ++s) {
        std::uint32_t k = at;  // the first point of slice s (or the next slice's, if it is empty)
        while (k < at + count[c] && slice[order[k]] < s) ++k;
        ASSERT_EQ(index.slice_start[first_slice + s], k) << "cell " << c << " slice " << s;
      }
      at += count[c];
      first_slice += slices(c);
    }
    ASSERT_EQ(index.start[g.total], n);
    for (std::size_t k = 0; k < n; ++k) {
      for (int d = 0; d < p.dim(); ++d) ASSERT_EQ(index.sorted.coord(d)[k], p.coord(d)[order[k]]);
      if (p.has_weights()) ASSERT_EQ(index.sorted.weights()[k], p.weights()[order[k]]);
    }
    EXPECT_EQ(index.sorted.has_weights(), p.has_weights());
  }
}

}  // namespace

TEST(Grid, CellIndexEqualsAStableSortByCellAndSlice) {
  const auto seed = fresh_seed();
  SCOPED_TRACE("seed " + std::to_string(seed));
  std::mt19937_64 rng(seed);
  PointSet uniform = scaled(testing_support::uniform_points(60000, 3, 0, 1, rng), {50, 50, 50});
  std::vector<double> w(uniform.size());
  for (auto& x : w) x = std::uniform_real_distribution<double>(0.5, 2.0)(rng);
  uniform.set_weights(w);
  ClusterOptions blobs;
  blobs.kind = ClusterOptions::Kind::GaussianBlobs;
  blobs.blobs = 2;
  blobs.sigma = 0.01;
  PointSet clustered = generate_clustered_box(20000, 3, 50, blobs, seed);
  const std::vector<double> centre{25.0, 25.0, 25.0};
  for (int k = 0; k < 500; ++k) clustered.push_back(centre);  // duplicates: one crowded cell
  const PointSet lattice = lattice_with_edges(3, {10, 10, 10}, 0.5);
  const Box box = Box::from_lengths(std::vector<double>{50, 50, 50});
  for (std::int64_t max_cells : {std::int64_t(500), std::int64_t(1) << 20}) {
    expect_index_equals_reference(uniform, 0.7, nullptr, max_cells);
    expect_index_equals_reference(uniform, 0.7, &box, max_cells);
    expect_index_equals_reference(clustered, 0.4, nullptr, max_cells);
    expect_index_equals_reference(lattice, 0.5, nullptr, max_cells);
  }
  expect_index_equals_reference(PointSet(3, 0), 1.0, nullptr, 1 << 20);
}
