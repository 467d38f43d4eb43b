#include <gtest/gtest.h>

#include <fstream>

#include "twobody/detail/engine/key_edges.hpp"
#include "twobody/error.hpp"
#include "twobody/extend/pair_function.hpp"

using namespace twobody;

namespace {
ErrorKind kind_of(auto&& f) {
  try {
    f();
  } catch (const Error& e) {
    return e.kind();
  }
  return ErrorKind::Internal;
}
std::string temp_file(const std::string& name, const std::string& text) {
  const std::string path = ::testing::TempDir() + name;
  std::ofstream(path) << text;
  return path;
}
}  // namespace

TEST(Binning, LinearAndLogEdges) {
  const auto lin = Binning::linear(1.0, 3.0, 4);
  EXPECT_EQ(lin.edges(), (std::vector<double>{1.0, 1.5, 2.0, 2.5, 3.0}));
  const auto lg = Binning::logarithmic(0.1, 100.0, 3);
  ASSERT_EQ(lg.nbins(), 3u);
  EXPECT_DOUBLE_EQ(lg.lo(1), 1.0);
  EXPECT_DOUBLE_EQ(lg.lo(2), 10.0);
  EXPECT_EQ(lg.hi(), 100.0);
}

TEST(Binning, RejectsBadEdges) {
  EXPECT_EQ(kind_of([] { Binning::from_edges({1.0, 1.0, 2.0}); }), ErrorKind::Config);
  EXPECT_EQ(kind_of([] { Binning::from_edges({2.0, 1.0}); }), ErrorKind::Config);
  EXPECT_EQ(kind_of([] { Binning::from_edges({-1.0, 1.0}); }), ErrorKind::Config);
  EXPECT_EQ(kind_of([] { Binning::from_edges({1.0}); }), ErrorKind::Config);
  EXPECT_EQ(kind_of([] { Binning::from_edges({0.0, NAN}); }), ErrorKind::Config);
  EXPECT_EQ(kind_of([] { Binning::logarithmic(0.0, 1.0, 4); }), ErrorKind::Config);
  EXPECT_EQ(kind_of([] { Binning::linear(2.0, 1.0, 4); }), ErrorKind::Config);
}

TEST(Binning, ReadsCorrfuncBinFiles) {
  const auto b = Binning::from_file(temp_file("bins_ok.txt", "# comment\n0.1 0.2\n0.2 0.5\n\n0.5 1.0\n"));
  EXPECT_EQ(b.edges(), (std::vector<double>{0.1, 0.2, 0.5, 1.0}));
  EXPECT_EQ(kind_of([] { Binning::from_file(temp_file("bins_gap.txt", "0.1 0.2\n0.3 0.5\n")); }), ErrorKind::Config);
  EXPECT_EQ(kind_of([] { Binning::from_file(temp_file("bins_dec.txt", "0.5 0.2\n")); }), ErrorKind::Config);
  EXPECT_EQ(kind_of([] { Binning::from_file(temp_file("bins_one.txt", "0.5\n")); }), ErrorKind::Input);
  EXPECT_EQ(kind_of([] { Binning::from_file(temp_file("bins_empty.txt", "")); }), ErrorKind::Input);
  EXPECT_EQ(kind_of([] { Binning::from_file("/nonexistent/bins.txt"); }), ErrorKind::Input);
}

TEST(FindBin, HalfOpenOnEveryEdge) {
  const auto b = Binning::from_edges({0.0, 1.0, 2.0, 3.0, 5.0, 8.0});
  const auto e = KeyEdges::make(b, Euclidean<3>{});
  const double* p = e.padded.data();
  EXPECT_EQ(find_bin(p, e.nbins, e.steps, 0.0), 0);
  EXPECT_EQ(find_bin(p, e.nbins, e.steps, std::nextafter(1.0, 0.0)), 0);
  EXPECT_EQ(find_bin(p, e.nbins, e.steps, 1.0), 1);
  EXPECT_EQ(find_bin(p, e.nbins, e.steps, 4.0), 2);
  EXPECT_EQ(find_bin(p, e.nbins, e.steps, 25.0), 4);
  EXPECT_EQ(find_bin(p, e.nbins, e.steps, std::nextafter(64.0, 0.0)), 4);
  EXPECT_EQ(find_bin(p, e.nbins, e.steps, 64.0), -1);
  EXPECT_EQ(find_bin(p, e.nbins, e.steps, -1.0), -1);
  EXPECT_EQ(find_bin(p, e.nbins, e.steps, NAN), -1);
  // Every bin count from 1 to 300: each key on an edge lands in the bin that edge opens.
  for (int nb = 1; nb <= 300; nb += 7) {
    const auto bb = Binning::linear(0.0, 1.0, nb);
    const auto ke = KeyEdges::make(bb, Euclidean<1>{});
    for (int k = 0; k < nb; ++k) {
      ASSERT_EQ(find_bin(ke.padded.data(), ke.nbins, ke.steps, ke.padded[k]), k);
      ASSERT_EQ(find_bin(ke.padded.data(), ke.nbins, ke.steps, std::nextafter(ke.padded[k + 1], 0.0)), k);
    }
  }
}

TEST(FindBin, AngularKeysReverseTheOrder) {
  const auto b = Binning::from_edges({0.0, 1.0, 10.0, 90.0});
  const AngularSeparation f;
  const auto e = KeyEdges::make(b, f);
  EXPECT_EQ(e.padded[0], -1.0);
  const double c5 = std::cos(5.0 * M_PI / 180.0);
  EXPECT_EQ(find_bin(e.padded.data(), e.nbins, e.steps, -c5), 1);
  EXPECT_EQ(find_bin(e.padded.data(), e.nbins, e.steps, -1.0), 0);  // theta = 0 is in [0, 1)
}
