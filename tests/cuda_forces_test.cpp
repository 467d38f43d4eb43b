// Forces with the CUDA backend asked for: the device has no output for per-point vector sums yet
// (issue 24), so the engine runs them on the CPU and says why; the result is the CPU's, bit for
// bit, with --backend auto, cuda and hybrid alike.
#include <gtest/gtest.h>

#include <random>

#include "twobody/detail/engine/backend.hpp"
#include "twobody/engine.hpp"
#include "twobody/forces.hpp"
#include "twobody/generate.hpp"

namespace {

using namespace twobody;

TEST(CudaForces, RefusedToTheCpuWithTheSameBits) {
  if (!make_cuda_backend()) GTEST_SKIP() << "no CUDA backend or device";
  // A periodic LJ liquid-like set: uniform, the closest pair found by the first pass.
  const PointSet bodies = generate_uniform_box(20000, 3, 29.0, 5);
  ForceOptions o;
  o.cutoff = 2.5;
  RunOptions cpu;
  cpu.backend = "cpu";
  const BodyForces ref = short_range_forces(bodies, {}, o, Box::cube(3, 29.0), cpu);
  for (const char* backend : {"auto", "cuda", "hybrid"}) {
    RunOptions r;
    r.backend = backend;
    const BodyForces f = short_range_forces(bodies, {}, o, Box::cube(3, 29.0), r);
    EXPECT_EQ(f.force, ref.force) << backend;
    EXPECT_EQ(f.energy, ref.energy) << backend;
    EXPECT_EQ(f.total_energy, ref.total_energy) << backend;
    EXPECT_EQ(f.virial, ref.virial) << backend;
    EXPECT_NE(f.info.plan.find("has no output for forces"), std::string::npos) << backend << ": " << f.info.plan;
  }
}

}  // namespace
