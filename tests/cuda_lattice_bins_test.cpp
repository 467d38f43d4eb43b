// The lattice sources binned on the device (cuda/lattice_device_bins.cu) against the host's
// bin_sources and work_items: every Source field, every offset and every work item the same, on
// the map tests' adversarial cases (sources on nodes, at the cutoff, in a clump, far outside, far
// images of periodic axes, offsets of 2^20, bins of several nodes). CUDA builds only.
#include <gtest/gtest.h>

#include <cstdlib>
#include <cstring>
#include <vector>

#include "lattice_cases.hpp"
#include "twobody/detail/cuda/device_buffer.hpp"
#include "twobody/detail/cuda/lattice_device_bins.hpp"
#include "twobody/detail/cuda/lattice_tiles.hpp"
#include "twobody/detail/engine/lattice_bins.hpp"
#include "twobody/detail/engine/lattice_plan.hpp"

namespace {

using namespace twobody;
using namespace lattice_cases;

void expect_device_bins_equal_the_hosts(const Case& c, const char* what) {
  const LatticeSources src = sources_of(c);
  RunOptions o;
  o.backend = "cuda";
  const LatticePlan plan = make_lattice_plan(c.stat, src, o);
  const lattice::Binned host = lattice::bin_sources(plan);
  const cuda::DeviceBins device = cuda::bin_sources_on_device(plan, host.axis);
  ASSERT_EQ(device.kept, host.sources.size()) << what;
  ASSERT_EQ(device.start.size(), host.start.size()) << what;
  EXPECT_EQ(device.start.download(), std::vector<std::uint64_t>(host.start.begin(), host.start.end())) << what;
  const std::vector<lattice::Source> got = device.sources.download();
  std::size_t differ = 0;
  for (std::size_t j = 0; j < got.size(); ++j) {
    const lattice::Source &a = got[j], &b = host.sources[j];
    const bool same = std::memcmp(a.x, b.x, sizeof a.x) == 0 && std::memcmp(a.b, b.b, sizeof a.b) == 0 &&
                      std::memcmp(a.f, b.f, sizeof a.f) == 0 && std::memcmp(&a.re, &b.re, sizeof a.re) == 0 &&
                      std::memcmp(&a.im, &b.im, sizeof a.im) == 0 && std::memcmp(&a.aux, &b.aux, sizeof a.aux) == 0;
    if (!same && differ++ == 0) ADD_FAILURE() << what << ": source " << j << " differs (x " << a.x[0] << " / " << b.x[0] << ")";
  }
  EXPECT_EQ(differ, 0u) << what;
  // The work items, from the host's offsets and from the device's.
  const Lattice& L = c.stat.lattice;
  long long tiles_per[3], nb[3];
  std::vector<long long> runs[3];
  for (int k = 0; k < 3; ++k) {
    tiles_per[k] = (L.shape[k] + cuda::kTile - 1) / cuda::kTile;
    nb[k] = host.axis[k].nb;
    runs[k] = cuda::tile_runs(host.axis[k], L.shape[k], tiles_per[k]);
  }
  for (const std::uint64_t share : {std::uint64_t{8192}, std::uint64_t{37}}) {
    const std::vector<cuda::WorkItem> want = cuda::work_items(runs, tiles_per, nb, share, [&](long long row, long long x0, long long x1) {
      return host.start[static_cast<std::size_t>(row + x1 + 1)] - host.start[static_cast<std::size_t>(row + x0)];
    });
    const cuda::DeviceBuffer<long long> rx(runs[0]), ry(runs[1]), rz(runs[2]);
    const long long* const device_runs[3] = {rx.get(), ry.get(), rz.get()};
    std::size_t items = 0;
    const cuda::DeviceBuffer<cuda::WorkItem> made =
        cuda::work_items_on_device(device.start.get(), device_runs, tiles_per, nb, share, items);
    ASSERT_EQ(items, want.size()) << what << ", share " << share;
    const std::vector<cuda::WorkItem> got_items = made.download();
    for (std::size_t i = 0; i < items; ++i) {
      ASSERT_EQ(got_items[i].tile, want[i].tile) << what << ", item " << i;
      ASSERT_EQ(got_items[i].first, want[i].first) << what << ", item " << i;
      ASSERT_EQ(got_items[i].end, want[i].end) << what << ", item " << i;
    }
  }
}

TEST_F(CudaLattice, DeviceBinsAreTheHostsBytes) {
  expect_device_bins_equal_the_hosts(make_case(81, LatticeKernel::CoulombSwitched, Support::Ball, 3, 6000, false), "open 3-D");
  expect_device_bins_equal_the_hosts(make_case(82, LatticeKernel::KaiserBessel, Support::Box, 3, 6000, true), "periodic, complex");
  expect_device_bins_equal_the_hosts(make_case(83, LatticeKernel::BlinnBlob, Support::Ball, 3, 4000, false, 0x1p20), "offset 2^20, radii");
  expect_device_bins_equal_the_hosts(make_case(84, LatticeKernel::KaiserBessel, Support::Ball, 2, 20000, true), "dense 2-D");
  // Far images of a periodic lattice, and sources too far from an open one to be kept.
  Case far = make_case(85, LatticeKernel::BlinnBlob, Support::Ball, 3, 3000, true, 1000.0);
  Case out = make_case(86, LatticeKernel::CoulombSwitched, Support::Ball, 3, 3000, false);
  for (Case* c : {&far, &out}) {
    std::vector<std::vector<double>> x(3);
    for (int k = 0; k < 3; ++k) {
      auto& col = x[static_cast<std::size_t>(k)];
      col.assign(c->points.coord(k).begin(), c->points.coord(k).end());
      for (std::size_t i = 0; i < col.size(); ++i)
        col[i] += c == &far ? static_cast<double>(static_cast<int>(i % 7) - 3) * c->stat.lattice.period(k)
                            : (i % 3 == 0 ? 40.0 * static_cast<double>(k + 1) : 0.0);
    }
    c->points = PointSet::from_columns(x);
  }
  expect_device_bins_equal_the_hosts(far, "far images");
  expect_device_bins_equal_the_hosts(out, "a third far outside");
  // Bins of several nodes (partial last bins, wrapping runs).
  const Case periodic = make_case(87, LatticeKernel::CoulombSwitched, Support::Ball, 3, 4000, true);
  for (const char* bin : {"2", "3", "8"}) {
    setenv("TWOBODY_LATTICE_BIN", bin, 1);
    expect_device_bins_equal_the_hosts(periodic, bin);
  }
  unsetenv("TWOBODY_LATTICE_BIN");
}

TEST_F(CudaLattice, HostAndDeviceBinningGiveTheSameMap) {
  const Case c = make_case(88, LatticeKernel::KaiserBessel, Support::Ball, 3, 30000, false);
  for (Precision p : {Precision::Single, Precision::Double}) {
    const LatticeMap device = run_on(c, p, "cuda");
    setenv("TWOBODY_LATTICE_BINNING", "host", 1);
    const LatticeMap host = run_on(c, p, "cuda");
    unsetenv("TWOBODY_LATTICE_BINNING");
    ASSERT_EQ(device.values.size(), host.values.size());
    EXPECT_EQ(std::memcmp(device.values.data(), host.values.data(), device.values.size() * sizeof(double)), 0);
    EXPECT_EQ(device.terms, host.terms);
    EXPECT_NE(device.plan.find("binning on the device"), std::string::npos) << device.plan;
    EXPECT_EQ(host.plan.find("binning on the device"), std::string::npos) << host.plan;
  }
}

}  // namespace
