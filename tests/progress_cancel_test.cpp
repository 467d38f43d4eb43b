// A progress callback that throws cancels the run (the Python module's Ctrl-C): the exception
// leaves run() whatever the traversal and thread count, and the engine runs normally afterwards.
#include <gtest/gtest.h>

#include <random>

#include "twobody/engine.hpp"
#include "twobody/statistics.hpp"

namespace twobody {
namespace {

struct Cancelled {};

PointSet uniform(std::size_t n, std::uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<double> u(0.0, 100.0);
  PointSet p(3, n);
  for (int d = 0; d < 3; ++d)
    for (auto& x : p.coord(d)) x = u(rng);
  return p;
}

TEST(ProgressCancel, ThrowingCallbackStopsTheRunAndTheNextRunIsWhole) {
  const PointSet p = uniform(20000, 5);
  const Binning bins = Binning::linear(0.0, 10.0, 4);
  for (const char* path : {"brute", "grid"})
    for (int threads : {1, 2}) {
      RunOptions opt;
      opt.backend = "cpu";
      opt.path = path;
      opt.threads = threads;
      int calls = 0;
      opt.progress = [&calls](double) {
        ++calls;
        throw Cancelled{};
      };
      EXPECT_THROW(paircount(p, nullptr, bins, std::nullopt, false, opt), Cancelled) << path << " " << threads;
      EXPECT_EQ(calls, 1) << path;
      opt.progress = nullptr;
      const BinnedResult whole = paircount(p, nullptr, bins, std::nullopt, false, opt);
      RunOptions reference;
      reference.backend = "cpu";
      reference.path = "brute";
      EXPECT_EQ(whole.raw.counts, paircount(p, nullptr, bins, std::nullopt, false, reference).raw.counts) << path;
    }
}

}  // namespace
}  // namespace twobody
