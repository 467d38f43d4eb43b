// Forces on the GPU (reduce::PointSums, cuda/output/point_sums_output.cuh) against the CPU, bit for
// bit: Lennard-Jones in a periodic box and open, cutoff Coulomb with charges, 1-, 2- and 3-D, a
// close contact whose terms exceed 2^63 steps of the grid (the wide sums), bodies on a lattice
// (equal distances, pairs exactly at the cutoff), the grid agent and the brute force;
// and a pair closer than the declared closest separation refused as on the CPU.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdlib>
#include <random>
#include <string>
#include <vector>

#include "twobody/detail/engine/backend.hpp"
#include "twobody/engine.hpp"
#include "twobody/error.hpp"
#include "twobody/forces.hpp"
#include "twobody/generate.hpp"

namespace {

using namespace twobody;

class CudaForces : public ::testing::Test {
 protected:
  void SetUp() override {
    if (!make_cuda_backend()) GTEST_SKIP() << "no CUDA backend or device";
  }
};

void expect_same(const PointSet& bodies, std::span<const double> charges, const ForceOptions& o, const std::optional<Box>& box,
                 const char* what) {
  RunOptions cpu, cuda;
  cpu.backend = "cpu";
  cuda.backend = "cuda";
  const BodyForces ref = short_range_forces(bodies, charges, o, box, cpu);
  const BodyForces got = short_range_forces(bodies, charges, o, box, cuda);
  EXPECT_EQ(got.force, ref.force) << what;
  EXPECT_EQ(got.energy, ref.energy) << what;
  EXPECT_EQ(got.partners, ref.partners) << what;
  EXPECT_EQ(got.total_energy, ref.total_energy) << what;
  EXPECT_EQ(got.virial, ref.virial) << what;
  EXPECT_NE(got.info.plan.find("cuda"), std::string::npos) << what << ": " << got.info.plan;
  std::uint64_t partners = 0;
  for (auto c : ref.partners) partners += c;
  EXPECT_GT(partners, 0u) << what;
}

TEST_F(CudaForces, LennardJonesAndCoulombAreTheCpusBits) {
  ForceOptions lj;
  lj.cutoff = 2.5;
  expect_same(generate_uniform_box(20000, 3, 29.0, 5), {}, lj, Box::cube(3, 29.0), "LJ periodic 3-D");
  expect_same(generate_uniform_box(6000, 3, 18.0, 6), {}, lj, std::nullopt, "LJ open 3-D");
  lj.force.shift = true;
  expect_same(generate_uniform_box(8000, 2, 60.0, 7), {}, lj, Box::cube(2, 60.0), "LJ shifted periodic 2-D");
  expect_same(generate_uniform_box(3000, 1, 900.0, 8), {}, lj, std::nullopt, "LJ open 1-D");
  // Cutoff Coulomb: the charges as the points' weights.
  ForceOptions q;
  q.cutoff = 3.0;
  q.force.potential = PairPotential::CoulombSwitched;
  const PointSet ions = generate_uniform_box(12000, 3, 25.0, 9);
  std::mt19937_64 rng(10);
  std::uniform_real_distribution<double> u(-1.5, 1.5);
  std::vector<double> charges(ions.size());
  for (double& c : charges) c = u(rng);
  expect_same(ions, charges, q, Box::cube(3, 25.0), "Coulomb periodic");
  expect_same(ions, charges, q, std::nullopt, "Coulomb open");
}

TEST_F(CudaForces, ACloseContactLatticeAndOffsetsAreTheCpusBits) {
  // A cubic lattice of spacing 1 (every neighbour at exactly 1, the cutoff √2 met by the
  // diagonals exactly at their edge), offset by 10^6, with one body moved to 0.05 of another: a
  // close contact whose LJ terms pass 2^63 steps of the grid the other pairs set.
  const int n = 14;
  const auto lattice = [&](double offset) {
    std::vector<std::vector<double>> x(3);
    for (int a = 0; a < n; ++a)
      for (int b = 0; b < n; ++b)
        for (int c = 0; c < n; ++c) {
          x[0].push_back(offset + a);
          x[1].push_back(offset + b);
          x[2].push_back(offset + c);
        }
    x[0][5] = x[0][4] + 0.05;
    x[1][5] = x[1][4];
    x[2][5] = x[2][4];
    return PointSet::from_columns(x);
  };
  ForceOptions lj;
  lj.cutoff = std::sqrt(2.0);
  expect_same(lattice(1e6), {}, lj, std::nullopt, "lattice offset by 10^6 with a close contact");
  expect_same(lattice(0.25), {}, lj, Box::cube(3, static_cast<double>(n)), "the lattice in a periodic box");
}

TEST_F(CudaForces, TheBruteForceAndTheGridGiveTheSameBits) {
  const PointSet bodies = generate_uniform_box(5000, 3, 15.0, 11);
  ForceOptions lj;
  lj.cutoff = 2.5;
  for (const char* path : {"brute", "grid"}) {
    RunOptions cpu, cuda;
    cpu.backend = "cpu";
    cuda.backend = "cuda";
    cuda.path = path;
    const BodyForces ref = short_range_forces(bodies, {}, lj, Box::cube(3, 15.0), cpu);
    const BodyForces got = short_range_forces(bodies, {}, lj, Box::cube(3, 15.0), cuda);
    EXPECT_EQ(got.force, ref.force) << path;
    EXPECT_EQ(got.energy, ref.energy) << path;
    EXPECT_EQ(got.virial, ref.virial) << path;
  }
}

TEST_F(CudaForces, APairCloserThanDeclaredIsRefusedAsOnTheCpu) {
  // The statistic run directly with a closest separation above the real one.
  const PointSet bodies = generate_uniform_box(4000, 3, 12.0, 12);
  ForceOptions lj;
  lj.cutoff = 2.5;
  const Statistic s = forces_statistic(lj, Box::cube(3, 12.0), 1.0, false, 1.0);
  RunOptions cpu, cuda;
  cpu.backend = "cpu";
  cuda.backend = "cuda";
  EXPECT_THROW(run(s, bodies, nullptr, cpu), Error);
  try {
    run(s, bodies, nullptr, cuda);
    ADD_FAILURE() << "a pair closer than the closest separation was summed";
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::Input);
    EXPECT_NE(std::string(e.what()).find("closer than the closest separation"), std::string::npos) << e.what();
  }
}

}  // namespace
