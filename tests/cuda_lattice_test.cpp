// The GPU's lattice gather (cuda/lattice_gather.cu) against the CPU traversal, bit for bit: every
// function in both precisions, 2-D and 3-D lattices, partial tiles, periodic axes, sources on nodes,
// at the cutoff and outside the lattice, offsets, dense bins (rows of more sources than a block
// stages at once); the mask and the term count; a cancel from the progress callback.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdlib>
#include <cstring>
#include <random>
#include <stdexcept>
#include <string>
#include <vector>

#include "lattice_cases.hpp"
#include "twobody/detail/engine/backend.hpp"
#include "twobody/error.hpp"
#include "twobody/lattice.hpp"

namespace {

using namespace twobody;
using namespace lattice_cases;

TEST_F(CudaLattice, EveryFunctionAndPrecisionIsTheCpuBitForBit) {
  const std::pair<LatticeKernel, Support> functions[] = {{LatticeKernel::CoulombSwitched, Support::Ball},
                                                         {LatticeKernel::BlinnBlob, Support::Ball},
                                                         {LatticeKernel::KaiserBessel, Support::Ball},
                                                         {LatticeKernel::KaiserBessel, Support::Box}};
  for (const auto& [kind, support] : functions)
    for (int dim : {2, 3})
      for (Precision p : {Precision::Single, Precision::Double}) {
        const Case c = make_case(7 + dim, kind, support, dim, 3000, false);
        expect_same_bits(c, p, "open");
      }
}

TEST_F(CudaLattice, PeriodicAxesOffsetsAndDenseBins) {
  for (Precision p : {Precision::Single, Precision::Double}) {
    expect_same_bits(make_case(21, LatticeKernel::CoulombSwitched, Support::Ball, 3, 6000, true), p, "periodic");
    expect_same_bits(make_case(22, LatticeKernel::KaiserBessel, Support::Box, 3, 6000, true), p, "periodic separable");
    expect_same_bits(make_case(23, LatticeKernel::BlinnBlob, Support::Ball, 3, 4000, false, 0x1p20), p, "offset 2^20");
    expect_same_bits(make_case(24, LatticeKernel::KaiserBessel, Support::Ball, 2, 20000, true), p, "dense 2-D");
  }
}

TEST_F(CudaLattice, RegularBinsPaddedOrCappedWithASpillGiveTheSameMap) {
  // Seed 002's baseline: every bin padded to the deepest one's depth, or capped at 3 with the
  // excess (the clump's bins spill) summed on the CPU while the GPU gathers, the sums added.
  for (Precision p : {Precision::Single, Precision::Double}) {
    const Case c = make_case(41, LatticeKernel::CoulombSwitched, Support::Ball, 3, 5000, false);
    expect_same_bits(c, p, "regular", LatticeBinning::Regular);
    expect_same_bits(c, p, "regular capped", LatticeBinning::Regular, 3);
    EXPECT_GT(run_on(c, p, "cuda", LatticeBinning::Regular, 3).spilled, 0u);
    EXPECT_EQ(run_on(c, p, "cuda", LatticeBinning::Regular).spilled, 0u);
    const Case g = make_case(42, LatticeKernel::KaiserBessel, Support::Box, 3, 8000, true);
    expect_same_bits(g, p, "regular periodic separable, capped", LatticeBinning::Regular, 2);
  }
}

TEST_F(CudaLattice, BinsOfSeveralNodesSplitTilesAndRegularBinsIn2D) {
  // Multi-node bins (partial last bins, runs of bins wrapping a periodic axis), as the CPU's tests
  // force them.
  const Case periodic = make_case(51, LatticeKernel::CoulombSwitched, Support::Ball, 3, 4000, true);
  for (const char* bin : {"2", "3", "8"}) {
    setenv("TWOBODY_LATTICE_BIN", bin, 1);
    expect_same_bits(periodic, Precision::Single, bin);
    expect_same_bits(periodic, Precision::Double, bin, LatticeBinning::Regular, 2);
  }
  unsetenv("TWOBODY_LATTICE_BIN");
  // 60 000 sources, most in the clump: tiles of far more than one item's 8 192 sources, items
  // ending mid-row and mid-staging, one item setting a node's exclusion and another adding to it.
  const Case crowded = make_case(52, LatticeKernel::CoulombSwitched, Support::Ball, 3, 60000, false);
  for (Precision p : {Precision::Single, Precision::Double}) {
    expect_same_bits(crowded, p, "split tiles");
    expect_same_bits(crowded, p, "split tiles, regular capped", LatticeBinning::Regular, 5);
  }
  const Case flat = make_case(53, LatticeKernel::KaiserBessel, Support::Box, 2, 6000, true);
  expect_same_bits(flat, Precision::Single, "regular 2-D", LatticeBinning::Regular);
  expect_same_bits(flat, Precision::Double, "regular 2-D capped", LatticeBinning::Regular, 1);
}

TEST_F(CudaLattice, FarImagesAndNoSourceNearTheLattice) {
  // Sources several periods away from a periodic lattice whose origin is offset.
  Case c = make_case(61, LatticeKernel::BlinnBlob, Support::Ball, 3, 3000, true, 1000.0);
  std::vector<std::vector<double>> x(3);
  for (int k = 0; k < 3; ++k) {
    x[static_cast<std::size_t>(k)].assign(c.points.coord(k).begin(), c.points.coord(k).end());
    for (std::size_t i = 0; i < x[static_cast<std::size_t>(k)].size(); ++i)
      x[static_cast<std::size_t>(k)][i] += static_cast<double>(static_cast<int>(i % 7) - 3) * c.stat.lattice.period(k);
  }
  c.points = PointSet::from_columns(x);
  expect_same_bits(c, Precision::Single, "far images");
  expect_same_bits(c, Precision::Double, "far images");
  // Every source beyond the cutoff of an open lattice: no work item, a map of zeros.
  Case none = make_case(62, LatticeKernel::CoulombSwitched, Support::Ball, 3, 500, false);
  for (int k = 0; k < 3; ++k) x[static_cast<std::size_t>(k)].assign(500, none.stat.lattice.origin[k] - 50.0 - k);
  none.points = PointSet::from_columns(x);
  const LatticeMap gpu = run_on(none, Precision::Single, "cuda");
  EXPECT_EQ(gpu.terms, 0u);
  EXPECT_EQ(gpu.values, run_on(none, Precision::Single, "cpu").values);
  for (double v : gpu.values) ASSERT_EQ(v, 0.0);
}

TEST_F(CudaLattice, ScatterAndGatherGiveTheCpusBits) {
  // A thread a source over its stencil into shared sums (64-bit single, 128-bit double), or a
  // thread a node; the same pairs, the same integers. Crowded tiles split into items, periodic images, 2-D, exclusions,
  // separable and radial supports, bins of several nodes.
  const Case cases[] = {make_case(91, LatticeKernel::KaiserBessel, Support::Ball, 3, 20000, false),
                        make_case(92, LatticeKernel::KaiserBessel, Support::Box, 3, 6000, true),
                        make_case(93, LatticeKernel::CoulombSwitched, Support::Ball, 3, 60000, false),
                        make_case(94, LatticeKernel::BlinnBlob, Support::Ball, 2, 20000, true),
                        make_case(95, LatticeKernel::KaiserBessel, Support::Ball, 3, 4000, false, 0x1p20)};
  for (const char* traversal : {"scatter", "gather"}) {
    setenv("TWOBODY_LATTICE_TRAVERSAL", traversal, 1);
    for (const Case& c : cases)
      for (Precision p : {Precision::Single, Precision::Double}) expect_same_bits(c, p, traversal);
    setenv("TWOBODY_LATTICE_BIN", "3", 1);
    expect_same_bits(cases[1], Precision::Single, traversal);
    unsetenv("TWOBODY_LATTICE_BIN");
    const LatticeMap m = run_on(cases[0], Precision::Single, "cuda");
    EXPECT_NE(m.plan.find(std::string(traversal) + " ("), std::string::npos) << m.plan;
  }
  unsetenv("TWOBODY_LATTICE_TRAVERSAL");
  // Auto takes scatter for these cutoffs of a few spacings, in both precisions, and gather for
  // regular bins.
  EXPECT_NE(run_on(cases[0], Precision::Single, "cuda").plan.find("scatter ("), std::string::npos);
  EXPECT_NE(run_on(cases[0], Precision::Double, "cuda").plan.find("scatter ("), std::string::npos);
  EXPECT_NE(run_on(cases[0], Precision::Single, "cuda", LatticeBinning::Regular).plan.find("gather (scatter takes"),
            std::string::npos);
}

TEST_F(CudaLattice, ACancelFromTheProgressCallbackStopsTheRun) {
  const Case c = make_case(31, LatticeKernel::CoulombSwitched, Support::Ball, 3, 3000, false);
  LatticeSources src;
  src.points = &c.points;
  src.strength = c.re;
  RunOptions o;
  o.backend = "cuda";
  int calls = 0;
  o.progress = [&](double f) {
    ++calls;
    if (f >= 0.5) throw std::runtime_error("cancelled");
  };
  EXPECT_THROW(run(c.stat, src, o), std::runtime_error);
  EXPECT_GE(calls, 1);
  o.progress = nullptr;
  EXPECT_EQ(run(c.stat, src, o).values, run_on(c, c.stat.precision, "cpu").values);  // the device is still usable
  // Over two passes (regular bins and their spill) the progress still ends at exactly 1.
  reduce::OntoLattice regular = c.stat;
  regular.binning = LatticeBinning::Regular;
  regular.bin_depth = 1;
  double last = 0;
  o.progress = [&](double f) {
    EXPECT_GE(f, last);
    last = f;
  };
  EXPECT_GT(run(regular, src, o).spilled, 0u);
  EXPECT_EQ(last, 1.0);
}

}  // namespace
