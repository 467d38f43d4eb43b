// The cosine distance on the FP16 Gram tiles and the k-NN on rows prepared on the device, against
// the CPU backend (itself tested against the float64 rule in joins_test.cpp) bit for bit:
//   - the device's cosine rows (normalised, not centred, N = 1) equal make_cosine_gram_rows and
//     cpu::RuleRows' rows; the k-NN's row terms made on the device (make_gram_knn_rows_on_device)
//     equal make_gram_knn_rows for both metrics, float16/32/64 rows, self and cross sets;
//   - cosine joins (total, per vector, pairs) and k-NN at d = 16, 17, 128, 960 on clustered rows,
//     a large common component (near-parallel rows: keys near 0), duplicates and parallel rows of
//     other lengths (keys an ulp about 0, eps = 0), pairs exactly at eps, ties, n not a multiple
//     of the tiles', forced small queues, pair buffers and k-NN lists;
//   - the cosine bound on the tensor cores' own MMAs (s̃ = the epilogue's model bit for bit, within
//     the bound of twice the rule's key) on adversarial rows;
//   - a zero row: the rule's Error(Input) in the CPU's words;
//   - the device k-NN path against the host-prepared reference path (run_gram_knn's two forms).
// Label: gpu.
#include <gtest/gtest.h>

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstring>
#include <iostream>
#include <random>
#include <string>
#include <vector>

#include "test_support.hpp"
#include "twobody/detail/cpu/vector_rows.hpp"
#include "twobody/detail/cuda/gram_knn.hpp"
#include "twobody/detail/cuda/gram_knn_rows_device.hpp"
#include "twobody/detail/cuda/gram_rows_device.hpp"
#include "twobody/detail/cuda/gram_tiles.hpp"
#include "twobody/detail/engine/backend.hpp"
#include "twobody/detail/exact/gram_bounds.hpp"
#include "twobody/joins.hpp"
#include "vector_test_data.hpp"

using namespace twobody;
using testing_support::expect_error;
using testing_support::fresh_seed;
using testing_support::on;
using testing_support::ScopedEnv;

namespace {

class CudaGramCosine : public ::testing::Test {
 protected:
  void SetUp() override {
    if (!make_cuda_backend()) GTEST_SKIP() << "no CUDA backend or device";
  }
};

constexpr const char* kGramJoin = "FP16 Gram tiles on the tensor cores";
constexpr const char* kGramKnn = "FP16 Gram tiles k-NN on the tensor cores (cosine";

template <class T>
std::vector<std::uint64_t> bits(const std::vector<T>& v) {
  std::vector<std::uint64_t> b(v.size());
  for (std::size_t t = 0; t < v.size(); ++t) {
    std::uint64_t x = 0;
    std::memcpy(&x, &v[t], sizeof(T));
    b[t] = x;
  }
  return b;
}

// n rows about 50 centres (N(0, 1) + offset in every coordinate), each centre + N(0, spread²);
// then duplicates, and copies scaled by 2 (the same unit row) and by 3 (parallel, rounded apart).
VectorSet cosine_rows(std::size_t n, int d, std::mt19937_64& rng, double spread, double offset) {
  const VectorSet centres = testing_support::gaussian_vectors(50, d, rng, offset);
  std::normal_distribution<double> g(0.0, spread);
  const std::size_t dd = static_cast<std::size_t>(d);
  std::vector<double> v(n * dd), c(dd);
  for (std::size_t i = 0; i < n; ++i) {
    centres.row_f64(rng() % 50, c.data());
    for (std::size_t k = 0; k < dd; ++k) v[i * dd + k] = c[k] + g(rng);
  }
  for (std::size_t i = 0; i + 3 < n && i < n / 10; i += 3) {
    const std::size_t from = rng() % n;
    for (std::size_t k = 0; k < dd; ++k) {
      v[i * dd + k] = v[from * dd + k];
      v[(i + 1) * dd + k] = 2 * v[from * dd + k];
      v[(i + 2) * dd + k] = 3 * v[from * dd + k];
    }
  }
  return VectorSet::from_rows(std::move(v), n, d);
}

VectorSet as_float(const VectorSet& v) {
  std::vector<float> f(v.size() * static_cast<std::size_t>(v.dim()));
  std::vector<double> r(static_cast<std::size_t>(v.dim()));
  for (std::size_t i = 0; i < v.size(); ++i) {
    v.row_f64(i, r.data());
    for (std::size_t k = 0; k < r.size(); ++k) f[i * r.size() + k] = static_cast<float>(r[k]);
  }
  return VectorSet::from_rows(std::move(f), v.size(), v.dim());
}

void expect_same_terms(const cuda::GramKnnRows& dev, const cuda::GramKnnRows& host, const std::string& what) {
  EXPECT_EQ(bits(dev.norm2), bits(host.norm2)) << what << ": N̂";
  EXPECT_EQ(bits(dev.rounded_norm), bits(host.rounded_norm)) << what << ": m";
  EXPECT_EQ(bits(dev.rounding), bits(host.rounding)) << what << ": ρ";
  EXPECT_EQ(bits(dev.norm_low), bits(host.norm_low)) << what << ": lower norms";
  ASSERT_EQ(dev.blocks.size(), host.blocks.size()) << what;
  for (std::size_t b = 0; b < host.blocks.size(); ++b) {
    const cuda::GramKnnBlock x = dev.blocks[b], y = host.blocks[b];
    EXPECT_EQ(bits(std::vector<double>{x.m_max, x.rho_max, x.n_max, x.n_min}),
              bits(std::vector<double>{y.m_max, y.rho_max, y.n_max, y.n_min}))
        << what << ": block " << b;
  }
}

// The device's preparation (rows and k-NN terms) of a self (b null) or cross set against the
// host's, for one metric.
void expect_device_terms_equal_host(const VectorSet& a, const VectorSet* b, Metric m, const std::string& what) {
  const bool cosine = m == Metric::Cosine;
  const std::vector<double> ha = cpu::rule_rows_f64(a, m, 2, ""), hb = b ? cpu::rule_rows_f64(*b, m, 2, "") : std::vector<double>{};
  const int d = a.dim();
  const std::vector<double> centre =
      cosine ? std::vector<double>(static_cast<std::size_t>(d), 0.0)
             : cuda::gram_centre(ha.data(), a.size(), b ? hb.data() : nullptr, b ? b->size() : 0, d, 2);
  cuda::GramPreparation how;
  how.cosine = cosine;
  const cuda::DeviceGramSets dev = cuda::prepare_gram_rows_on_device(a, b, how);
  ASSERT_EQ(dev.refusal, "") << what;
  EXPECT_EQ(bits(dev.centre), bits(centre)) << what << ": the centre";
  const auto host_set = [&](const std::vector<double>& rows, std::size_t n) {
    cuda::GramRows g = cosine ? cuda::make_cosine_gram_rows(rows.data(), n, d, 2) : cuda::make_gram_rows(rows.data(), n, d, centre, 2);
    cuda::sort_by_norm(g, 2);
    return g;
  };
  const cuda::DeviceGramRows* sets[2] = {&dev.a, b ? &dev.b : nullptr};
  const std::vector<double>* host_rows[2] = {&ha, &hb};
  for (int s = 0; s < 2; ++s) {
    if (!sets[s]) continue;
    const std::string w = what + (s == 0 ? ", first set" : ", second set");
    const std::vector<double>& rows = *host_rows[s];
    EXPECT_EQ(bits(sets[s]->rule.download()), bits(rows)) << w << ": the rule's rows";
    const cuda::GramRows host = host_set(rows, rows.size() / static_cast<std::size_t>(d));
    ASSERT_EQ(host.refusal, "") << w;
    const cuda::GramRows dg = sets[s]->download();
    EXPECT_EQ(dg.half, host.half) << w << ": FP16 rows";
    EXPECT_EQ(bits(dg.norm2), bits(host.norm2)) << w << ": N";
    EXPECT_EQ(bits(dg.sigma), bits(host.sigma)) << w << ": σ";
    EXPECT_EQ(bits(dg.norm_up), bits(host.norm_up)) << w << ": n";
    EXPECT_EQ(dg.order, host.order) << w << ": the norm order";
    const cuda::GramKnnRows terms = cuda::make_gram_knn_rows(host, rows.data(), centre, 2);
    expect_same_terms(cuda::make_gram_knn_rows_on_device(*sets[s], dev.centre).download(), terms, w);
  }
}

RunOptions gpu_fp16() {
  RunOptions o = on("cuda");
  o.precision = "fp16";
  return o;
}

// A cosine join's three outputs on both backends, equal; the GPU's plans must name the Gram tiles.
void expect_same_cosine_join(const VectorSet& a, const VectorSet* b, double eps, const std::string& what,
                             const RunOptions& gpu_run = gpu_fp16()) {
  for (JoinOutput out : {JoinOutput::Total, JoinOutput::Counts, JoinOutput::Pairs}) {
    JoinOptions o;
    o.eps = eps;
    o.metric = Metric::Cosine;
    o.output = out;
    const Statistic s = join_statistic(b != nullptr, o);
    const Result cpu = run(s, a, b, on("cpu"));
    const Result gpu = run(s, a, b, gpu_run);
    const std::string w = what + " eps " + std::to_string(eps) + " output " + std::to_string(static_cast<int>(out));
    EXPECT_NE(gpu.info.plan.find(kGramJoin), std::string::npos) << w << "\n" << gpu.info.plan;
    EXPECT_EQ(gpu.counts, cpu.counts) << w;
    EXPECT_EQ(gpu.per_point_a.counts, cpu.per_point_a.counts) << w;
    EXPECT_EQ(gpu.per_point_b.counts, cpu.per_point_b.counts) << w;
    ASSERT_EQ(gpu.pairs.size(), cpu.pairs.size()) << w;
    for (std::size_t t = 0; t < cpu.pairs.size(); ++t) {
      ASSERT_EQ(gpu.pairs[t].i, cpu.pairs[t].i) << w << " pair " << t;
      ASSERT_EQ(gpu.pairs[t].j, cpu.pairs[t].j) << w << " pair " << t;
      ASSERT_EQ(std::bit_cast<std::uint64_t>(gpu.pairs[t].value), std::bit_cast<std::uint64_t>(cpu.pairs[t].value))
          << w << " pair " << t;
    }
  }
}

void expect_same_cosine_knn(const VectorSet& a, const VectorSet* b, int k, const std::string& what,
                            const RunOptions& gpu_run = gpu_fp16()) {
  const Statistic s = knn_statistic(b != nullptr, k, Metric::Cosine);
  const Result cpu = run(s, a, b, on("cpu"));
  const Result gpu = run(s, a, b, gpu_run);
  const std::string w = what + " k=" + std::to_string(k);
  EXPECT_NE(gpu.info.plan.find(kGramKnn), std::string::npos) << w << "\n" << gpu.info.plan;
  EXPECT_EQ(gpu.nearest.index, cpu.nearest.index) << w;
  EXPECT_EQ(bits(gpu.nearest.key), bits(cpu.nearest.key)) << w;
  EXPECT_EQ(bits(gpu.nearest.value), bits(cpu.nearest.value)) << w;
}

// The keys of the first `rows` rows' pairs by the CPU, sorted: edges exactly on keys.
std::vector<double> cpu_cosine_values(const VectorSet& v, std::size_t rows) {
  JoinOptions o;
  o.eps = 2.0;
  o.metric = Metric::Cosine;
  std::vector<double> out;
  for (const PairRecord& p : similarity_join(v.slice(0, std::min(rows, v.size())), nullptr, o, on("cpu")).pairs)
    out.push_back(p.value);
  std::sort(out.begin(), out.end());
  return out;
}

// The cosine bound on the tensor cores' own MMAs (gram_tiles.hpp: gram_distances on cosine rows):
// per pair, s̃ equals the epilogue's float32 model 2·fl32(1 − D) bit for bit, and |s̃ − 2·key64|
// stays within gram_cosine_bound (what the verdicts rely on); the worst ratio, printed.
double worst_cosine_ratio(const std::vector<double>& raw, std::size_t n, int d, const std::string& what) {
  const VectorSet v = VectorSet::from_rows(raw, n, d);
  const std::vector<double> unit = cpu::rule_rows_f64(v, Metric::Cosine, 1, "");
  const cuda::GramRows g = cuda::make_cosine_gram_rows(unit.data(), n, d, 1);
  EXPECT_EQ(g.refusal, "") << what;
  if (!g.refusal.empty()) return 0;
  cuda::GramRows sorted = g;
  cuda::sort_by_norm(sorted);
  const cuda::GramDistances out = cuda::gram_distances(sorted, sorted);
  const std::size_t du = static_cast<std::size_t>(d);
  double worst = 0;
  std::size_t bad = 0;
  for (std::size_t i = 0; i < n; ++i)
    for (std::size_t j = i + 1; j < n; ++j) {
      const float G = out.products[i * n + j], s = out.distances[i * n + j];
      const float D = (G * g.inv_sigma[i]) * g.inv_sigma[j];
      const float s_model = std::fma(-2.f, D, 1.f + 1.f);
      double dot = 0;
      for (std::size_t k = 0; k < du; ++k) dot += unit[i * du + k] * unit[j * du + k];
      const double key = 1.0 - dot;
      const double e = exact::gram_cosine_bound(exact::kFp16GramFolded, d, g.norm_up[i], g.norm_up[j], g.sigma[i], g.sigma[j]);
      const double ratio = std::fabs(static_cast<double>(s) - 2 * key) / e;
      worst = std::max(worst, ratio);
      if ((s != s_model || !(ratio <= 1.0)) && bad++ < 5)
        ADD_FAILURE() << what << " d=" << d << " pair " << i << ", " << j << ": s " << s << " (model " << s_model
                      << "), 2 key " << 2 * key << ", |s - 2 key| / 2E " << ratio;
    }
  std::cout << what << " d=" << d << ": max |s - 2 key64| / 2E = " << worst << "\n";
  return worst;
}

}  // namespace

TEST_F(CudaGramCosine, TensorCoreCosinesStayWithinTheBound) {
  const auto seed = fresh_seed();
  std::mt19937_64 rng(seed);
  SCOPED_TRACE("seed " + std::to_string(seed));
  constexpr std::size_t n = 384;
  double worst = 0;
  for (int d : {16, 128, 960}) {
    const std::size_t du = static_cast<std::size_t>(d);
    std::normal_distribution<double> g;
    const auto gaussian = [&](double offset, double scale) {
      std::vector<double> r(n * du);
      for (double& x : r) x = offset + scale * g(rng);
      return r;
    };
    worst = std::max(worst, worst_cosine_ratio(gaussian(0, 1), n, d, "gaussian"));
    worst = std::max(worst, worst_cosine_ratio(gaussian(1e3, 1), n, d, "large common component"));
    std::vector<double> spiky = gaussian(0, 1e-7);
    for (std::size_t i = 0; i < n; ++i) spiky[i * du + rng() % du] = 3.0;
    worst = std::max(worst, worst_cosine_ratio(spiky, n, d, "spikes and subnormals"));
    std::vector<double> alternating(n * du);
    std::uniform_real_distribution<double> u(-3, 3);
    for (std::size_t t = 0; t < alternating.size(); ++t) alternating[t] = (t % 2 ? -1 : 1) * std::pow(10.0, u(rng));
    worst = std::max(worst, worst_cosine_ratio(alternating, n, d, "alternating signs"));
    std::vector<double> near = gaussian(5, 1);
    near.resize(n / 2 * du);
    std::normal_distribution<double> tiny(0, 1e-4);
    for (std::size_t t = 0, m = near.size(); t < m; ++t) near.push_back(near[t] * 3 + tiny(rng));
    worst = std::max(worst, worst_cosine_ratio(near, n, d, "near-parallel"));
  }
  RecordProperty("worst_error_over_bound", std::to_string(worst));
  EXPECT_GT(worst, 1e-6) << "the cosines are suspiciously exact";
}

TEST_F(CudaGramCosine, DeviceRowsAndKnnTermsEqualTheHosts) {
  const auto seed = fresh_seed();
  std::mt19937_64 rng(seed);
  SCOPED_TRACE("seed " + std::to_string(seed));
  for (int d : {16, 17, 128, 960}) {
    const std::size_t n = d >= 960 ? 300 : 1000;
    const VectorSet a = cosine_rows(n, d, rng, 0.3, 0.0);
    const VectorSet b = as_float(cosine_rows(n / 2 + 7, d, rng, 0.3, 5.0));
    const VectorSet offset = cosine_rows(n, d, rng, 1e-3, 1e3);
    for (Metric m : {Metric::Euclidean, Metric::Cosine}) {
      const std::string w = std::string(m == Metric::Cosine ? "cosine" : "euclidean") + " d=" + std::to_string(d);
      expect_device_terms_equal_host(a, nullptr, m, w + " self");
      expect_device_terms_equal_host(a, &b, m, w + " cross f64 x f32");
      expect_device_terms_equal_host(offset, nullptr, m, w + " large common component");
    }
  }
}

TEST_F(CudaGramCosine, JoinsEqualTheCpu) {
  const auto seed = fresh_seed();
  std::mt19937_64 rng(seed);
  SCOPED_TRACE("seed " + std::to_string(seed));
  for (int d : {16, 17, 128, 960}) {
    const std::size_t n = d >= 960 ? 400 : 1100;
    const VectorSet a = cosine_rows(n, d, rng, 0.3, 0.0);
    const VectorSet b = as_float(cosine_rows(n / 2 + 7, d, rng, 0.3, 0.0));
    const std::string w = "d=" + std::to_string(d);
    const std::vector<double> keys = cpu_cosine_values(a, n);
    // eps on a pair's key exactly (inclusive), a typical eps, eps = 0 (parallel rows only).
    for (double eps : {keys[keys.size() / 200], keys[keys.size() / 20], 0.0}) {
      expect_same_cosine_join(a, nullptr, eps, w + " self");
      expect_same_cosine_join(a, &b, eps, w + " cross");
    }
    // A large common component: every pair nearly parallel, keys ~1e-7, the band ~1e-3 wide.
    const VectorSet off = cosine_rows(n, d, rng, 1.0, 1e3);
    const std::vector<double> ok = cpu_cosine_values(off, n);
    expect_same_cosine_join(off, nullptr, ok[ok.size() / 10], w + " large common component");
  }
}

TEST_F(CudaGramCosine, JoinsWithForcedSmallQueuesAndBuffers) {
  const auto seed = fresh_seed();
  std::mt19937_64 rng(seed);
  SCOPED_TRACE("seed " + std::to_string(seed));
  const ScopedEnv queue("TWOBODY_GRAM_QUEUE_PAIRS", "7");
  const ScopedEnv buffer("TWOBODY_GRAM_PAIR_BUFFER", "300");
  const VectorSet a = cosine_rows(700, 128, rng, 1.0, 1e3);  // many undecided pairs
  const std::vector<double> keys = cpu_cosine_values(a, 700);
  expect_same_cosine_join(a, nullptr, keys[keys.size() / 4], "forced small");
}

TEST_F(CudaGramCosine, ZeroRowsKeepTheRulesError) {
  std::mt19937_64 rng(fresh_seed());
  const VectorSet good = cosine_rows(300, 32, rng, 0.3, 0.0);
  std::vector<double> v(300 * 32);
  for (std::size_t i = 0; i < 300; ++i) good.row_f64(i, v.data() + i * 32);
  std::fill_n(v.begin() + 5 * 32, 32, 0.0);
  const VectorSet zero = VectorSet::from_rows(std::move(v), 300, 32);
  JoinOptions o;
  o.eps = 0.1;
  o.metric = Metric::Cosine;
  for (const char* precision : {"fp16", "fp64", "auto"}) {
    RunOptions gpu = on("cuda");
    gpu.precision = precision;
    expect_error(ErrorKind::Input, "vector 6 has norm 0", [&] { similarity_join(zero, nullptr, o, gpu); });
    expect_error(ErrorKind::Input, "second set: vector 6 has norm 0", [&] { similarity_join(good, &zero, o, gpu); });
    expect_error(ErrorKind::Input, "vector 6 has norm 0",
                 [&] { run(knn_statistic(false, 3, Metric::Cosine), zero, nullptr, gpu); });
  }
}

TEST_F(CudaGramCosine, KnnEqualsTheCpu) {
  const auto seed = fresh_seed();
  std::mt19937_64 rng(seed);
  SCOPED_TRACE("seed " + std::to_string(seed));
  for (int d : {16, 17, 128, 960}) {
    const std::size_t n = d >= 960 ? 400 : 1100;
    const VectorSet a = cosine_rows(n, d, rng, 0.3, 0.0);
    const VectorSet b = as_float(cosine_rows(n / 2 + 7, d, rng, 0.3, 0.0));
    const VectorSet off = cosine_rows(n, d, rng, 1.0, 1e3);
    const std::string w = "d=" + std::to_string(d);
    for (int k : {1, 10, 64}) {
      expect_same_cosine_knn(a, nullptr, k, w + " self");
      expect_same_cosine_knn(a, &b, k, w + " cross");
    }
    expect_same_cosine_knn(off, nullptr, 10, w + " large common component");
  }
  // Ties: an integer lattice (many equal keys, ties by index) and forced short lists (fallbacks).
  const VectorSet lattice = testing_support::lattice_vectors(900, 24, rng);
  expect_same_cosine_knn(lattice, nullptr, 20, "lattice");
  const ScopedEnv short_lists("TWOBODY_GRAM_KNN_CAPACITY", "1");
  expect_same_cosine_knn(cosine_rows(600, 64, rng, 0.3, 0.0), nullptr, 5, "lists of k entries");
}

TEST_F(CudaGramCosine, DeviceKnnEqualsTheHostPreparedReference) {
  // run_gram_knn on the device's rows and terms against run_gram_knn on the host's, both metrics:
  // the same lists.
  const auto seed = fresh_seed();
  std::mt19937_64 rng(seed);
  SCOPED_TRACE("seed " + std::to_string(seed));
  for (Metric m : {Metric::Euclidean, Metric::Cosine}) {
    const bool cosine = m == Metric::Cosine;
    const VectorSet a = cosine_rows(1500, 128, rng, 0.2, 2.0);
    const std::vector<double> rows = cpu::rule_rows_f64(a, m, 2, "");
    const std::vector<double> centre = cosine ? std::vector<double>(128, 0.0) : cuda::gram_centre(rows.data(), 1500, nullptr, 0, 128, 2);
    cuda::GramRows g = cosine ? cuda::make_cosine_gram_rows(rows.data(), 1500, 128, 2) : cuda::make_gram_rows(rows.data(), 1500, 128, centre, 2);
    cuda::sort_by_norm(g, 2);
    const cuda::GramKnnRows terms = cuda::make_gram_knn_rows(g, rows.data(), centre, 2);
    cuda::GramKnnInput in;
    in.a = rows.data();
    in.b = rows.data();
    in.na = in.nb = 1500;
    in.dim = 128;
    in.cosine = cosine;
    in.k = 10;
    in.capacity = cuda::gram_knn_capacity(10, 1499);
    const cuda::GramKnnResult host = cuda::run_gram_knn(in, g, terms, nullptr, nullptr);
    cuda::GramPreparation how;
    how.cosine = cosine;
    const cuda::DeviceGramSets dev = cuda::prepare_gram_rows_on_device(a, nullptr, how);
    const cuda::DeviceGramKnnRows dterms = cuda::make_gram_knn_rows_on_device(dev.a, dev.centre);
    const cuda::GramKnnResult device = cuda::run_gram_knn(in, dev.a, dterms, nullptr, nullptr);
    const std::string w = cosine ? "cosine" : "euclidean";
    // (Which entries a list admits depends on when its threshold fell, so the counters and the rare
    // fallbacks may differ between two runs; the lists may not.)
    EXPECT_LT(device.fallback.size(), 150u) << w;
    EXPECT_LT(host.fallback.size(), 150u) << w;
    const auto fell_back = [](const cuda::GramKnnResult& r, std::size_t q) {
      return std::binary_search(r.fallback.begin(), r.fallback.end(), static_cast<std::uint32_t>(q));
    };
    for (std::size_t q = 0; q < 1500; ++q) {
      if (fell_back(host, q) || fell_back(device, q)) continue;
      for (std::size_t t = q * 10; t < q * 10 + 10; ++t) {
        ASSERT_EQ(device.index[t], host.index[t]) << w << " query " << q;
        ASSERT_EQ(std::bit_cast<std::uint64_t>(device.key[t]), std::bit_cast<std::uint64_t>(host.key[t])) << w << " query " << q;
      }
    }
  }
}

TEST_F(CudaGramCosine, SmallSetsForTheSanitizers) {
  // Every new kernel once on a small set (scripts/gpu-check runs this under memcheck and racecheck):
  // the normalisation, the k-NN's row terms, cosine counts and pairs with a tiny queue and buffer,
  // the cosine k-NN with lists of k entries (fallbacks on the device's rows).
  const auto seed = fresh_seed();
  std::mt19937_64 rng(seed);
  SCOPED_TRACE("seed " + std::to_string(seed));
  const VectorSet a = cosine_rows(300, 40, rng, 0.3, 1.0), b = as_float(cosine_rows(130, 40, rng, 0.3, 1.0));
  expect_device_terms_equal_host(a, &b, Metric::Cosine, "small cross");
  expect_device_terms_equal_host(a, nullptr, Metric::Euclidean, "small self");
  const std::vector<double> keys = cpu_cosine_values(a, 300);
  {
    const ScopedEnv queue("TWOBODY_GRAM_QUEUE_PAIRS", "5");
    const ScopedEnv buffer("TWOBODY_GRAM_PAIR_BUFFER", "64");
    expect_same_cosine_join(a, nullptr, keys[keys.size() / 20], "small self");
    expect_same_cosine_join(a, &b, keys[keys.size() / 20], "small cross");
  }
  const ScopedEnv short_lists("TWOBODY_GRAM_KNN_CAPACITY", "1");
  expect_same_cosine_knn(a, nullptr, 4, "small self");
  expect_same_cosine_knn(a, &b, 4, "small cross");
}
