// The Gram rows prepared on the device (cuda/gram_rows_device.hpp) against the host reference
// (gram_centre, make_gram_rows, sort_by_norm), bit for bit: the centre, FP16 bits, σ, N, n, the
// norm order (ties by index), padding and per-block bounds, the rule's rows; on random and
// adversarial rows stored as float16, float32 and float64, borrowed with a row stride, cross sets
// of two element types, rows equal to the centre, FP16 subnormals, duplicates, n and d that are
// not multiples of the tiles'. The device's FP16 rounding against half_bits on ties, subnormals
// and the overflow edge; the range refusal read back from the device in the host's words; and
// joins through the engine with the new preparation and the precision choice. Label: gpu.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "test_support.hpp"
#include "twobody/detail/cuda/gram_rows_device.hpp"
#include "twobody/detail/engine/backend.hpp"
#include "twobody/joins.hpp"
#include "vector_test_data.hpp"

using namespace twobody;
using testing_support::fresh_seed;
using testing_support::on;

namespace {

class CudaGramRows : public ::testing::Test {
 protected:
  void SetUp() override {
    if (!make_cuda_backend()) GTEST_SKIP() << "no CUDA backend or device";
  }
};

std::vector<double> promoted(const VectorSet& v) {
  std::vector<double> out(v.size() * static_cast<std::size_t>(v.dim()));
  for (std::size_t i = 0; i < v.size(); ++i) v.row_f64(i, out.data() + i * static_cast<std::size_t>(v.dim()));
  return out;
}

// Bits of a double vector, so that == compares -0 and NaN as bits.
std::vector<std::uint64_t> bits(const std::vector<double>& v) {
  std::vector<std::uint64_t> b(v.size());
  std::memcpy(b.data(), v.data(), v.size() * sizeof(double));
  return b;
}
std::vector<std::uint32_t> bits(const std::vector<float>& v) {
  std::vector<std::uint32_t> b(v.size());
  std::memcpy(b.data(), v.data(), v.size() * sizeof(float));
  return b;
}

void expect_same_rows(const cuda::GramRows& dev, const cuda::GramRows& host, const std::string& what) {
  EXPECT_EQ(dev.n, host.n) << what;
  EXPECT_EQ(dev.n_padded, host.n_padded) << what;
  EXPECT_EQ(dev.dim_padded, host.dim_padded) << what;
  ASSERT_EQ(dev.half.size(), host.half.size()) << what;
  for (std::size_t t = 0; t < host.half.size(); ++t)
    ASSERT_EQ(dev.half[t], host.half[t]) << what << ": row " << t / static_cast<std::size_t>(host.dim_padded) << " coordinate "
                                         << t % static_cast<std::size_t>(host.dim_padded);
  EXPECT_EQ(bits(dev.norm2), bits(host.norm2)) << what;
  EXPECT_EQ(bits(dev.inv_sigma), bits(host.inv_sigma)) << what;
  EXPECT_EQ(bits(dev.norm_up), bits(host.norm_up)) << what;
  EXPECT_EQ(bits(dev.sigma), bits(host.sigma)) << what;
  EXPECT_EQ(bits(dev.block_norm_max), bits(host.block_norm_max)) << what;
  EXPECT_EQ(bits(dev.block_sigma_min), bits(host.block_sigma_min)) << what;
  EXPECT_EQ(dev.order, host.order) << what;
}

// Both preparations of a self-join (b null) or a cross join, sorted and in the sets' order.
void expect_device_equals_host(const VectorSet& a, const VectorSet* b, const std::string& what) {
  const std::vector<double> ha = promoted(a), hb = b ? promoted(*b) : std::vector<double>{};
  const int d = a.dim();
  const std::vector<double> centre = cuda::gram_centre(ha.data(), a.size(), b ? hb.data() : nullptr, b ? b->size() : 0, d, 3);
  for (bool sort : {true, false}) {
    const std::string w = what + (sort ? " (sorted)" : " (sets' order)");
    cuda::GramPreparation how;
    how.sort = sort;
    const cuda::DeviceGramSets dev = cuda::prepare_gram_rows_on_device(a, b, how);
    ASSERT_EQ(dev.refusal, "") << w;
    EXPECT_EQ(bits(dev.centre), bits(centre)) << w << ": the centre";
    EXPECT_EQ(bits(dev.a.rule.download()), bits(ha)) << w << ": the rule's rows";
    cuda::GramRows host_a = cuda::make_gram_rows(ha.data(), a.size(), d, centre, 2);
    ASSERT_EQ(host_a.refusal, "") << w;
    if (sort) cuda::sort_by_norm(host_a, 2);
    expect_same_rows(dev.a.download(), host_a, w + ", first set");
    if (!b) {
      EXPECT_EQ(dev.b.n, 0u) << w;
      continue;
    }
    EXPECT_EQ(bits(dev.b.rule.download()), bits(hb)) << w << ": the second set's rule rows";
    cuda::GramRows host_b = cuda::make_gram_rows(hb.data(), b->size(), d, centre, 2);
    if (sort) cuda::sort_by_norm(host_b, 2);
    expect_same_rows(dev.b.download(), host_b, w + ", second set");
  }
}

std::vector<double> gaussian_rows(std::size_t n, int d, std::mt19937_64& rng, double offset, double scale) {
  std::normal_distribution<double> g(0.0, scale);
  std::vector<double> v(n * static_cast<std::size_t>(d));
  for (double& x : v) x = offset + g(rng);
  return v;
}

}  // namespace

TEST_F(CudaGramRows, HalfRoundingOnTheDeviceEqualsHalfBits) {
  const auto seed = fresh_seed();
  std::mt19937_64 rng(seed);
  SCOPED_TRACE("seed " + std::to_string(seed));
  std::vector<double> v;
  const auto both = [&](double x) {
    v.push_back(x);
    v.push_back(-x);
    v.push_back(std::nextafter(x, 0.0));
    v.push_back(std::nextafter(x, HUGE_VAL));
  };
  // Ties (and their neighbours one double ulp away) in every binade, normal and subnormal.
  for (int e = -24; e <= 15; ++e)
    for (int m = 0; m < 64; ++m) both(std::ldexp(1.0 + (2 * m + 1) * 0x1p-11, e));
  for (int k = 0; k < 2048; ++k) both((k + 0.5) * 0x1p-24);
  // The normal/subnormal boundary, the smallest values, the overflow edge, zeros, double subnormals.
  for (double x : {0x1p-14, 0x1p-14 - 0x1p-25, 0x1p-14 - 0x1p-26, 0x1p-24, 0x1p-25, 3 * 0x1p-25, 0x1p-26, 65504.0, 65519.0,
                   65519.999, 65520.0, 65536.0, 1e300, HUGE_VAL, 0.0, 4.9406564584124654e-324, 2.2250738585072014e-308, 1.0,
                   0.99999, 0.5, 0.999755859375})
    both(x);
  // Random values over the FP16 range and beyond.
  std::uniform_real_distribution<double> exponent(-30, 17);
  for (int t = 0; t < 200000; ++t) v.push_back((rng() % 2 ? -1 : 1) * std::pow(2.0, exponent(rng)));
  const std::vector<std::uint16_t> dev = cuda::half_bits_on_device(v);
  ASSERT_EQ(dev.size(), v.size());
  std::size_t wrong = 0;
  for (std::size_t t = 0; t < v.size(); ++t)
    if (dev[t] != cuda::half_bits(v[t]) && ++wrong < 10)
      ADD_FAILURE() << std::hexfloat << v[t] << ": device " << dev[t] << ", half_bits " << cuda::half_bits(v[t]);
  EXPECT_EQ(wrong, 0u);
}

TEST_F(CudaGramRows, DeviceRowsEqualTheHostsOnRandomSets) {
  const auto seed = fresh_seed();
  std::mt19937_64 rng(seed);
  SCOPED_TRACE("seed " + std::to_string(seed));
  for (int d : {1, 17, 32, 37, 128, 960}) {
    const std::size_t n = d >= 960 ? 700 : 1300;  // not a multiple of 128
    const VectorSet a = testing_support::gaussian_mixture(n, d, rng);
    const VectorSet b = VectorSet::from_rows(gaussian_rows(n / 3 + 5, d, rng, 3.0, 2.0), n / 3 + 5, d);
    expect_device_equals_host(a, nullptr, "mixture d=" + std::to_string(d));
    expect_device_equals_host(a, &b, "mixture cross d=" + std::to_string(d));
  }
  // Across the centre's chunks of 4096 rows (A's rows and B's in one chunk), offsets of 10^6.
  const VectorSet big = VectorSet::from_rows(gaussian_rows(5000, 24, rng, 1e6, 1.0), 5000, 24);
  const VectorSet big2 = VectorSet::from_rows(gaussian_rows(3500, 24, rng, 1e6, 1e-3), 3500, 24);
  expect_device_equals_host(big, &big2, "offset 1e6, 8500 rows");
  expect_device_equals_host(big, nullptr, "offset 1e6, 5000 rows");
  // One row, one block.
  const VectorSet one = VectorSet::from_rows(gaussian_rows(1, 40, rng, 0, 1), 1, 40);
  expect_device_equals_host(one, nullptr, "one row");
}

TEST_F(CudaGramRows, DeviceRowsEqualTheHostsOnEveryStorage) {
  const auto seed = fresh_seed();
  std::mt19937_64 rng(seed);
  SCOPED_TRACE("seed " + std::to_string(seed));
  constexpr std::size_t n = 900;
  constexpr int d = 50;
  std::normal_distribution<double> g;
  std::vector<float> f(n * d);
  for (float& x : f) x = static_cast<float>(10 + g(rng));
  const VectorSet f32 = VectorSet::from_rows(f, n, d);
  std::vector<std::uint16_t> h(n * d);
  for (auto& x : h) x = static_cast<std::uint16_t>(0x3800 + (rng() % 0x0a00)) | (rng() % 2 ? 0x8000 : 0);
  const VectorSet f16 = VectorSet::from_half_bits(h, n, d);
  const VectorSet f64 = VectorSet::from_rows(gaussian_rows(n / 2, d, rng, 10, 1), n / 2, d);
  expect_device_equals_host(f32, nullptr, "float32");
  expect_device_equals_host(f16, nullptr, "float16");
  expect_device_equals_host(f32, &f16, "float32 x float16");
  expect_device_equals_host(f16, &f64, "float16 x float64");
  // Borrowed rows with a stride above d (the caller's padded array), and a slice of it.
  auto storage = std::make_shared<std::vector<float>>(n * (d + 7));
  for (float& x : *storage) x = static_cast<float>(g(rng));
  const VectorSet strided = VectorSet::borrow(storage->data(), Element::F32, n, d, d + 7, storage);
  expect_device_equals_host(strided, nullptr, "borrowed, stride d + 7");
  expect_device_equals_host(strided.slice(13, 400), &f64, "a slice of it x float64");
  // float32 rows beyond one 64 MB staging slab (17000 x 1000 x 4 bytes: two slabs), and float16.
  std::vector<float> large(std::size_t(17000) * 1000);
  for (float& x : large) x = static_cast<float>(g(rng));
  expect_device_equals_host(VectorSet::from_rows(std::move(large), 17000, 1000), nullptr, "float32, two staging slabs");
  std::vector<std::uint16_t> large_h(std::size_t(40000) * 1000);
  for (auto& x : large_h) x = static_cast<std::uint16_t>(0x3000 + (rng() % 0x1000));
  expect_device_equals_host(VectorSet::from_half_bits(std::move(large_h), 40000, 1000), nullptr, "float16, two staging slabs");
}

TEST_F(CudaGramRows, DeviceRowsEqualTheHostsOnAdversarialRows) {
  const auto seed = fresh_seed();
  std::mt19937_64 rng(seed);
  SCOPED_TRACE("seed " + std::to_string(seed));
  std::normal_distribution<double> g;
  constexpr int d = 33;
  std::vector<double> v;
  const auto add = [&](const std::vector<double>& row) { v.insert(v.end(), row.begin(), row.end()); };
  std::vector<double> r(d);
  // Rows equal to the centre: a set of identical rows (all zero rows about their centre). Their
  // coordinates are multiples of 2^-6, so every partial sum of the column means is exact and the
  // centre is the row itself (with any other values the mean's rounding leaves residues of ~1e-15,
  // below the Gram path's range: both preparations refuse such a set, for the float64 kernel).
  for (double& x : r) x = 0.25 + std::round(64.0 * g(rng)) / 64.0;
  std::vector<double> same;
  for (int c = 0; c < 200; ++c) same.insert(same.end(), r.begin(), r.end());
  expect_device_equals_host(VectorSet::from_rows(same, 200, d), nullptr, "rows equal to the centre");
  // Duplicates (ties in the norm order, kept by index), one spike and tiny coordinates (FP16
  // subnormals after scaling), norms from 10^-9 to 10^9, alternating signs, exact zeros.
  for (int c = 0; c < 40; ++c) add(r);
  for (int t = 0; t < 300; ++t) {
    for (int k = 0; k < d; ++k) r[static_cast<std::size_t>(k)] = (k == t % d ? 1.0 : 1e-7 * g(rng)) * std::pow(10.0, t % 19 - 9);
    add(r);
  }
  for (int t = 0; t < 100; ++t) {
    for (int k = 0; k < d; ++k) r[static_cast<std::size_t>(k)] = (k % 2 ? -1 : 1) * (1 + 1e-3 * (t % 7));
    add(r);
  }
  for (int t = 0; t < 3; ++t) add(std::vector<double>(d, 0.0));
  const std::size_t n = v.size() / d;
  const VectorSet adv = VectorSet::from_rows(v, n, d);
  const VectorSet part = adv.slice(0, 129);
  expect_device_equals_host(adv, nullptr, "adversarial rows");
  expect_device_equals_host(part, &adv, "adversarial rows, cross");
}

TEST_F(CudaGramRows, RangeRefusalIsReadBackInTheHostsWords) {
  struct Case {
    const char* what;
    std::vector<double> a, b;  // rows of d = 3; b empty: a self-join
  };
  const std::vector<Case> cases = {
      {"a coordinate beyond 2^40", {0, 0, 0, 1, 1, 1, 0, 2e13, 0}, {}},
      {"a row 1e-13 from the centre", {1, 1, 1e-13, 1, 1, 0}, {}},
      {"infinity", {1, HUGE_VAL, 0, 0, 0, 0}, {}},
      {"a row of the second set at the centre but 1e-13", {0, 0, 0, 2, 2, 2}, {1, 1, 1 + 3e-13}},
      {"the first set of a cross join", {0, 0, 0, 1, 1, -5e13}, {0, 0, 0}},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.what);
    const VectorSet a = VectorSet::from_rows(c.a, c.a.size() / 3, 3), b = VectorSet::from_rows(c.b, c.b.size() / 3, 3);
    const bool cross = !c.b.empty();
    const std::vector<double> centre =
        cuda::gram_centre(c.a.data(), a.size(), cross ? c.b.data() : nullptr, cross ? b.size() : 0, 3, 1);
    // The words vector_runs gave with the host preparation: the first set's refusal, else the second's.
    const std::string ra = cuda::make_gram_rows(c.a.data(), a.size(), 3, centre, 1).refusal;
    const std::string rb = cross ? cuda::make_gram_rows(c.b.data(), b.size(), 3, centre, 1).refusal : "";
    ASSERT_FALSE(ra.empty() && rb.empty()) << "the case is not refused on the host";
    const std::string expected = !ra.empty() ? (cross ? "first set: " : "") + ra : "second set: " + rb;
    const cuda::DeviceGramSets dev = cuda::prepare_gram_rows_on_device(a, cross ? &b : nullptr);
    EXPECT_EQ(dev.refusal, expected);
    EXPECT_EQ(dev.a.rule.size(), c.a.size());  // the float64 kernel's rows are there all the same
  }
}

TEST_F(CudaGramRows, JoinsOnTheDevicesRowsEqualTheCpu) {
  const auto seed = fresh_seed();
  std::mt19937_64 rng(seed);
  SCOPED_TRACE("seed " + std::to_string(seed));
  // float32 and borrowed strided storage through the engine, every output.
  std::normal_distribution<double> g;
  constexpr std::size_t n = 1100;
  constexpr int d = 33;
  auto storage = std::make_shared<std::vector<float>>(n * (d + 3));
  for (float& x : *storage) x = static_cast<float>(g(rng));
  const VectorSet a = VectorSet::borrow(storage->data(), Element::F32, n, d, d + 3, storage);
  const VectorSet b = VectorSet::from_rows(gaussian_rows(300, d, rng, 0.2, 1.0), 300, d);
  const double eps = testing_support::eps_for(a, Metric::Euclidean, 0.02);
  for (const VectorSet* second : {static_cast<const VectorSet*>(nullptr), &b})
    for (JoinOutput out : {JoinOutput::Pairs, JoinOutput::Counts, JoinOutput::Total}) {
      JoinOptions o;
      o.eps = eps;
      o.output = out;
      const JoinResult cpu = similarity_join(a, second, o, on("cpu"));
      const JoinResult gpu = similarity_join(a, second, o, on("cuda"));
      EXPECT_NE(gpu.info.plan.find("FP16 Gram tiles"), std::string::npos) << gpu.info.plan;
      EXPECT_NE(gpu.info.plan.find("rows prepared on the device"), std::string::npos) << gpu.info.plan;
      EXPECT_EQ(gpu.total, cpu.total);
      EXPECT_EQ(gpu.counts, cpu.counts);
      EXPECT_EQ(gpu.counts_b, cpu.counts_b);
      ASSERT_EQ(gpu.pairs.size(), cpu.pairs.size());
      for (std::size_t t = 0; t < cpu.pairs.size(); ++t) {
        ASSERT_EQ(gpu.pairs[t].i, cpu.pairs[t].i);
        ASSERT_EQ(gpu.pairs[t].j, cpu.pairs[t].j);
        ASSERT_EQ(gpu.pairs[t].value, cpu.pairs[t].value);
      }
      // The run's precision, forced: the float64 kernel on the device's rule rows, the same result.
      RunOptions fp64 = on("cuda");
      fp64.precision = "fp64";
      const JoinResult f = similarity_join(a, second, o, fp64);
      EXPECT_NE(f.info.plan.find("float64 join kernel (precision fp64 requested)"), std::string::npos) << f.info.plan;
      EXPECT_EQ(f.total, cpu.total);
      EXPECT_EQ(f.counts, cpu.counts);
      EXPECT_EQ(f.pairs.size(), cpu.pairs.size());
    }
}

TEST_F(CudaGramRows, ThePrecisionChoiceMeasuresTheSample) {
  const auto seed = fresh_seed();
  std::mt19937_64 rng(seed);
  SCOPED_TRACE("seed " + std::to_string(seed));
  // 2^14 rows (1.3·10^8 pairs: sampled). Two clusters 2000 apart, spread 10^-3: every close pair
  // undecided at FP16, so the float64 kernel; unit Gaussians: the Gram tiles.
  constexpr std::size_t n = std::size_t(1) << 14;
  constexpr int d = 32;
  std::vector<double> v = gaussian_rows(n, d, rng, 0, 1e-3);
  for (std::size_t i = 0; i < n; ++i) v[i * d] += i % 2 ? 1e3 : -1e3;
  const VectorSet far = VectorSet::from_rows(v, n, d), plain = VectorSet::from_rows(gaussian_rows(n, d, rng, 0, 1), n, d);
  JoinOptions o;
  o.output = JoinOutput::Total;
  o.eps = 0.01;
  const JoinResult f = similarity_join(far, nullptr, o, on("cuda"));
  EXPECT_NE(f.info.plan.find("float64 join kernel (a sample of"), std::string::npos) << f.info.plan;
  EXPECT_EQ(f.total, similarity_join(far, nullptr, o, on("cpu")).total);
  o.eps = testing_support::eps_for(plain, Metric::Euclidean, 0.001, 2000);
  const JoinResult p = similarity_join(plain, nullptr, o, on("cuda"));
  EXPECT_NE(p.info.plan.find("FP16 Gram tiles"), std::string::npos) << p.info.plan;
  EXPECT_NE(p.info.plan.find("chosen by a sample of"), std::string::npos) << p.info.plan;
  EXPECT_EQ(p.total, similarity_join(plain, nullptr, o, on("cpu")).total);
}
