// The GPU's lattice gather (cuda/lattice_gather.cu) against the CPU traversal, bit for bit: every
// function in both precisions, 2-D and 3-D lattices, partial tiles, periodic axes, sources on nodes,
// at the cutoff and outside the lattice, offsets, dense bins (rows of more sources than a block
// stages at once); the mask and the term count; a cancel from the progress callback.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <random>
#include <stdexcept>
#include <vector>

#include "twobody/detail/engine/backend.hpp"
#include "twobody/error.hpp"
#include "twobody/lattice.hpp"

namespace {

using namespace twobody;

struct Case {
  PointSet points;
  std::vector<double> re, im, radius;
  reduce::OntoLattice stat;
};

Case make_case(std::uint64_t seed, LatticeKernel kind, Support support, int dim, std::size_t n, bool periodic,
               double offset = 0) {
  std::mt19937_64 rng(seed);
  Case c;
  Lattice& L = c.stat.lattice;
  L.dim = dim;
  L.origin = {offset - 1.25, offset + 0.5, offset + 3.0};
  L.spacing = {0.5, 0.375, 0.625};
  L.shape = {37, 29, dim == 3 ? 21 : 1};  // partial tiles on every axis
  for (int k = 0; k < dim; ++k) L.periodic[k] = periodic;
  LatticeFunction& f = c.stat.function;
  f.kind = kind;
  f.support = support;
  f.cutoff = 1.875;  // a multiple of the x spacing
  f.exclusion = 0.3;
  f.blobbiness = 2.5;
  f.beta = 6.5;
  std::vector<std::vector<double>> x(static_cast<std::size_t>(dim));
  for (int k = 0; k < dim; ++k) {
    const double lo = L.origin[k] - 2.5, hi = L.origin[k] + static_cast<double>(L.shape[k]) * L.spacing[k] + 2.5;
    std::uniform_real_distribution<double> u(lo, hi);
    for (std::size_t i = 0; i < n; ++i) x[static_cast<std::size_t>(k)].push_back(u(rng));
  }
  // Sources on nodes, on a node plus exactly the cutoff, and a dense clump (bin rows of more than
  // 512 sources).
  for (std::size_t i = 0; i < n / 8; ++i)
    for (int k = 0; k < dim; ++k) {
      auto& col = x[static_cast<std::size_t>(k)];
      const std::int64_t node = static_cast<std::int64_t>(i % static_cast<std::size_t>(L.shape[k]));
      col[i] = L.node(k, node) + (k == 0 && i % 2 ? f.cutoff : 0.0);
    }
  std::normal_distribution<double> clump(0, 0.2);
  for (std::size_t i = n / 8; i < n / 3; ++i)
    for (int k = 0; k < dim; ++k) x[static_cast<std::size_t>(k)][i] = L.node(k, L.shape[k] / 2) + clump(rng);
  c.points = PointSet::from_columns(x);
  std::uniform_real_distribution<double> q(-0.8, 0.8), r(0.6, 1.4);
  for (std::size_t i = 0; i < n; ++i) {
    c.re.push_back(q(rng));
    if (kind == LatticeKernel::BlinnBlob) c.radius.push_back(r(rng));
    if (kind == LatticeKernel::KaiserBessel) c.im.push_back(q(rng));
  }
  return c;
}

LatticeMap run_on(const Case& c, Precision p, const std::string& backend) {
  reduce::OntoLattice s = c.stat;
  s.precision = p;
  LatticeSources src;
  src.points = &c.points;
  src.strength = c.re;
  src.strength_im = c.im;
  src.radius = c.radius;
  RunOptions o;
  o.backend = backend;
  return run(s, src, o);
}

void expect_same_bits(const Case& c, Precision p, const char* what) {
  const LatticeMap cpu = run_on(c, p, "cpu");
  const LatticeMap gpu = run_on(c, p, "cuda");
  ASSERT_EQ(gpu.values.size(), cpu.values.size()) << what;
  std::size_t differ = 0, first = 0;
  for (std::size_t i = 0; i < cpu.values.size(); ++i)
    if (std::memcmp(&cpu.values[i], &gpu.values[i], sizeof(double)) != 0 && differ++ == 0) first = i;
  EXPECT_EQ(differ, 0u) << what << ": first at " << first << ": cpu " << cpu.values[first] << ", gpu " << gpu.values[first];
  EXPECT_EQ(gpu.excluded, cpu.excluded) << what;
  EXPECT_EQ(gpu.excluded_count, cpu.excluded_count) << what;
  EXPECT_EQ(gpu.terms, cpu.terms) << what;
  EXPECT_GT(cpu.terms, 0u) << what;
  EXPECT_NE(gpu.plan.find("backend: cuda"), std::string::npos) << gpu.plan;
}

class CudaLattice : public ::testing::Test {
 protected:
  void SetUp() override {
    if (!make_cuda_backend()) GTEST_SKIP() << "no CUDA backend or device";
  }
};

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
}

}  // namespace
