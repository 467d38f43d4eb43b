#pragma once
// Lattice-map cases for the GPU's tests (cuda_lattice_test.cpp, cuda_lattice_memory_test.cpp): random
// sources around a lattice of partial tiles, sources on nodes and at the cutoff, a dense clump, and
// the CPU-against-GPU comparison, bit for bit.
#include <gtest/gtest.h>

#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "twobody/detail/engine/backend.hpp"
#include "twobody/lattice.hpp"

namespace lattice_cases {

using namespace twobody;


struct Case {
  PointSet points;
  std::vector<double> re, im, radius;
  reduce::OntoLattice stat;
};

inline Case make_case(std::uint64_t seed, LatticeKernel kind, Support support, int dim, std::size_t n, bool periodic,
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

// The case's sources (borrowed from it: the case outlives them).
inline LatticeSources sources_of(const Case& c) {
  LatticeSources src;
  src.points = &c.points;
  src.strength = c.re;
  src.strength_im = c.im;
  src.radius = c.radius;
  return src;
}

inline LatticeMap run_on(const Case& c, Precision p, const std::string& backend,
                  LatticeBinning binning = LatticeBinning::Compact, int depth = 0) {
  reduce::OntoLattice s = c.stat;
  s.precision = p;
  s.binning = binning;
  s.bin_depth = depth;
  RunOptions o;
  o.backend = backend;
  return run(s, sources_of(c), o);
}

inline void expect_same_bits(const Case& c, Precision p, const char* what, LatticeBinning binning = LatticeBinning::Compact,
                      int depth = 0) {
  const LatticeMap cpu = run_on(c, p, "cpu");
  const LatticeMap gpu = run_on(c, p, "cuda", binning, depth);
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

}  // namespace lattice_cases
