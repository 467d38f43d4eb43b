// mutual_information against an independent evaluation of Daub et al.'s estimator: the B-splines by
// the plain Cox–de Boor recursion (0/0 = 0, the last knot in the last interval) and every sum and
// log in long double; closed forms of the histogram estimator (order 1); constant rows; the same
// bits whatever the threads and the tiles, cross entries equal to the auto ones; errors.
#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <filesystem>
#include <string>
#include <random>
#include <vector>

#include "twobody/error.hpp"
#include "twobody/io.hpp"
#include "twobody/matrices.hpp"
#include "twobody/mutual_information.hpp"

namespace {

using twobody::InformationUnit;
using twobody::MutualInformationOptions;
using twobody::VectorSet;

long double knot(int i, int M, int k) {
  if (i < k) return 0;
  if (i <= M - 1) return i - k + 1;
  return M - k + 1;
}

// B_{i,k}(z) by the recursion, with z at the last knot taken in the last non-empty interval.
long double basis(int i, int k, long double z, int M, int order) {
  if (k == 1) {
    const long double lo = knot(i, M, order), hi = knot(i + 1, M, order);
    const long double top = M - order + 1;
    if (z == top) return (lo < hi && hi == top) ? 1 : 0;
    return (lo <= z && z < hi) ? 1 : 0;
  }
  long double v = 0;
  const long double d1 = knot(i + k - 1, M, order) - knot(i, M, order);
  const long double d2 = knot(i + k, M, order) - knot(i + 1, M, order);
  if (d1 > 0) v += (z - knot(i, M, order)) / d1 * basis(i, k - 1, z, M, order);
  if (d2 > 0) v += (knot(i + k, M, order) - z) / d2 * basis(i + 1, k - 1, z, M, order);
  return v;
}

std::vector<std::vector<long double>> weights(const std::vector<double>& x, int M, int k) {
  const double lo = *std::min_element(x.begin(), x.end()), hi = *std::max_element(x.begin(), x.end());
  std::vector<std::vector<long double>> w(x.size(), std::vector<long double>(M));
  for (std::size_t s = 0; s < x.size(); ++s) {
    const long double z = hi > lo ? (static_cast<long double>(x[s]) - lo) / (static_cast<long double>(hi) - lo) * (M - k + 1) : 0;
    for (int i = 0; i < M; ++i) w[s][i] = basis(i, k, z, M, k);
  }
  return w;
}

long double entropy(const std::vector<long double>& p) {
  long double h = 0;
  for (long double q : p)
    if (q > 0) h -= q * std::log(q);
  return h;
}

struct Oracle {
  std::vector<long double> h;
  std::vector<std::vector<std::vector<long double>>> w;
  int M;
};

Oracle oracle(const std::vector<std::vector<double>>& rows, int M, int k) {
  Oracle o{{}, {}, M};
  for (const auto& r : rows) {
    o.w.push_back(weights(r, M, k));
    std::vector<long double> p(M, 0);
    for (const auto& ws : o.w.back())
      for (int i = 0; i < M; ++i) p[i] += ws[i] / r.size();
    o.h.push_back(entropy(p));
  }
  return o;
}

long double oracle_mi(const Oracle& a, std::size_t i, const Oracle& b, std::size_t j) {
  const int M = a.M;
  std::vector<long double> joint(M * M, 0);
  const auto &wa = a.w[i], &wb = b.w[j];
  for (std::size_t s = 0; s < wa.size(); ++s)
    for (int u = 0; u < M; ++u)
      for (int v = 0; v < M; ++v) joint[u * M + v] += wa[s][u] * wb[s][v] / wa.size();
  return a.h[i] + b.h[j] - entropy(joint);
}

VectorSet as_set(const std::vector<std::vector<double>>& rows) {
  std::vector<double> flat;
  for (const auto& r : rows) flat.insert(flat.end(), r.begin(), r.end());
  return VectorSet::from_rows(std::move(flat), rows.size(), static_cast<int>(rows.front().size()));
}

// Rows with structure: pairs of dependent rows (a function of another plus noise), independent
// ones, rows on a few values (ties, samples at the maximum), a constant row and a large offset.
std::vector<std::vector<double>> rows(std::size_t n, std::size_t d, unsigned seed) {
  std::mt19937_64 g(seed);
  std::normal_distribution<double> N;
  std::vector<std::vector<double>> r(n, std::vector<double>(d));
  for (std::size_t i = 0; i < n; ++i)
    for (std::size_t s = 0; s < d; ++s) {
      switch (i % 5) {
        case 0: r[i][s] = N(g); break;
        case 1: r[i][s] = std::sin(r[i - 1][s]) + 0.3 * N(g); break;
        case 2: r[i][s] = std::floor(3 * std::abs(N(g))); break;
        case 3: r[i][s] = 1e6 + r[i - 3][s] * r[i - 3][s]; break;
        default: r[i][s] = N(g) * N(g); break;
      }
    }
  r[n / 2].assign(d, 4.25);  // constant
  return r;
}

void expect_near_oracle(double got, long double want, const char* what) {
  EXPECT_NEAR(got, static_cast<double>(want), 1e-12 * std::max<long double>(1, std::fabs(want))) << what;
}

TEST(MutualInformation, EqualsTheRecursionInLongDouble) {
  for (auto [M, k] : {std::pair{10, 3}, std::pair{6, 1}, std::pair{8, 4}, std::pair{3, 3}, std::pair{12, 2}}) {
    const auto r = rows(23, 137, 40 + M * k);
    MutualInformationOptions o;
    o.bins = M;
    o.order = k;
    o.unit = InformationUnit::Nats;
    const auto m = twobody::mutual_information(as_set(r), nullptr, o);
    const Oracle orc = oracle(r, M, k);
    ASSERT_EQ(m.rows, 23u);
    for (std::size_t i = 0; i < m.rows; ++i) {
      expect_near_oracle(m.entropy_a[i], orc.h[i], "H");
      for (std::size_t j = 0; j < m.cols; ++j) expect_near_oracle(m.values[i * m.cols + j], oracle_mi(orc, i, orc, j), "MI");
    }
  }
}

TEST(MutualInformation, BitsAreNatsOverLogTwo) {
  const auto r = rows(7, 64, 3);
  MutualInformationOptions o;
  const auto bits = twobody::mutual_information(as_set(r), nullptr, o);
  o.unit = InformationUnit::Nats;
  const auto nats = twobody::mutual_information(as_set(r), nullptr, o);
  for (std::size_t c = 0; c < bits.values.size(); ++c)
    EXPECT_NEAR(bits.values[c], nats.values[c] / std::log(2.0), 1e-14 * std::max(1.0, bits.values[c]));
}

TEST(MutualInformation, OrderOneIsTheHistogramEstimator) {
  // k = 1: each sample in one bin, so MI(a, a) = H(a) and MI is the plug-in estimate of counts.
  std::mt19937_64 g(5);
  std::uniform_int_distribution<int> v(0, 3);
  const std::size_t d = 400;
  std::vector<std::vector<double>> r(2, std::vector<double>(d));
  for (std::size_t s = 0; s < d; ++s) {
    r[0][s] = v(g);
    r[1][s] = (r[0][s] + (v(g) == 0 ? 1 : 0));  // dependent
  }
  MutualInformationOptions o;
  o.bins = 4;
  o.order = 1;
  o.unit = InformationUnit::Nats;
  const auto m = twobody::mutual_information(as_set(r), nullptr, o);
  EXPECT_NEAR(m.values[0], m.entropy_a[0], 1e-14);
  // Row 1 spans 0..4 on 4 bins of width 1.25 (z = x · 4 / 5 · ... ): its bins by counting.
  auto bin = [&](std::size_t row, double x) {
    const double lo = *std::min_element(r[row].begin(), r[row].end()), hi = *std::max_element(r[row].begin(), r[row].end());
    return std::min(3, static_cast<int>((x - lo) / (hi - lo) * 4));
  };
  std::vector<double> pa(4), pb(4), pab(16);
  for (std::size_t s = 0; s < d; ++s) {
    pa[bin(0, r[0][s])] += 1.0 / d;
    pb[bin(1, r[1][s])] += 1.0 / d;
    pab[bin(0, r[0][s]) * 4 + bin(1, r[1][s])] += 1.0 / d;
  }
  auto H = [](const std::vector<double>& p) {
    double h = 0;
    for (double q : p)
      if (q > 0) h -= q * std::log(q);
    return h;
  };
  EXPECT_NEAR(m.values[1], H(pa) + H(pb) - H(pab), 1e-13);
  EXPECT_EQ(m.values[1], m.values[2]);  // symmetric
}

TEST(MutualInformation, ConstantRowsAndOneSampleGiveZero) {
  std::vector<std::vector<double>> r = {{2, 2, 2, 2}, {1, 5, 2, 7}, {-3, -3, -3, -3}};
  const auto m = twobody::mutual_information(as_set(r), nullptr, {});
  EXPECT_EQ(m.entropy_a[0], 0.0);
  EXPECT_EQ(m.entropy_a[2], 0.0);
  for (std::size_t j = 0; j < 3; ++j) {
    EXPECT_EQ(m.values[0 * 3 + j], 0.0);
    EXPECT_EQ(m.values[j * 3 + 2], 0.0);
  }
  EXPECT_GT(m.values[1 * 3 + 1], 0.0);
  const auto one = twobody::mutual_information(VectorSet::from_rows(std::vector<double>{1, 2, 3}, 3, 1), nullptr, {});
  for (double v : one.values) EXPECT_EQ(v, 0.0);
}

TEST(MutualInformation, SameBitsWhateverTheThreadsAndCrossEqualsAuto) {
  const auto r = rows(53, 211, 9);  // 53 rows: tiles of 16 end partway
  const VectorSet a = as_set(r);
  twobody::RunOptions one, three;
  one.threads = 1;
  three.threads = 3;
  const auto m1 = twobody::mutual_information(a, nullptr, {}, one);
  const auto m3 = twobody::mutual_information(a, nullptr, {}, three);
  EXPECT_EQ(m1.values, m3.values);
  const VectorSet copy = as_set(r);
  const auto x = twobody::mutual_information(a, &copy, {}, three);
  ASSERT_EQ(x.entropy_b, x.entropy_a);
  for (std::size_t i = 0; i < m1.rows; ++i)
    for (std::size_t j = i; j < m1.cols; ++j) ASSERT_EQ(x.values[i * x.cols + j], m1.values[i * m1.cols + j]) << i << "," << j;
  // A cross run of different sets: rows of b against rows of a.
  const auto rb = rows(11, 211, 10);
  const VectorSet b = as_set(rb);
  MutualInformationOptions o;
  o.unit = InformationUnit::Nats;
  const auto ab = twobody::mutual_information(a, &b, o);
  const Oracle oa = oracle(r, o.bins, o.order), ob = oracle(rb, o.bins, o.order);
  for (std::size_t i = 0; i < ab.rows; i += 7)
    for (std::size_t j = 0; j < ab.cols; ++j) expect_near_oracle(ab.values[i * ab.cols + j], oracle_mi(oa, i, ob, j), "cross");
}

TEST(MutualInformation, RefusesWhatItCannotEstimate) {
  const VectorSet a = as_set(rows(4, 10, 1));
  const VectorSet b = as_set(rows(4, 11, 2));
  auto kind = [](auto&& f) {
    try {
      f();
    } catch (const twobody::Error& e) {
      return e.kind();
    }
    return twobody::ErrorKind::Internal;
  };
  MutualInformationOptions o;
  o.order = 0;
  EXPECT_EQ(kind([&] { twobody::mutual_information(a, nullptr, o); }), twobody::ErrorKind::Config);
  o.order = 4;
  o.bins = 3;
  EXPECT_EQ(kind([&] { twobody::mutual_information(a, nullptr, o); }), twobody::ErrorKind::Config);
  EXPECT_EQ(kind([&] { twobody::mutual_information(a, &b, {}); }), twobody::ErrorKind::Input);
  auto bad = rows(4, 10, 1);
  bad[2][7] = std::nan("");
  EXPECT_EQ(kind([&] { twobody::mutual_information(as_set(bad), nullptr, {}); }), twobody::ErrorKind::Input);
}

}  // namespace

namespace {

// The matrix command's kernel "mi": the same values as mutual_information, in memory and in a .npy file.
TEST(MutualInformation, IsTheMatrixKernelMi) {
  const auto r = rows(9, 120, 77);
  const twobody::VectorSet a = as_set(r);
  twobody::MatrixOptions m;
  m.kernel = "mi";
  m.mi_bins = 7;
  m.mi_order = 2;
  MutualInformationOptions o;
  o.bins = 7;
  o.order = 2;
  const auto want = twobody::mutual_information(a, nullptr, o);
  const twobody::MatrixResult got = twobody::vector_matrix(a, nullptr, m);
  EXPECT_EQ(got.kernel, "mi");
  ASSERT_EQ(got.values.size(), want.values.size());
  EXPECT_TRUE(std::equal(got.values.begin(), got.values.end(), want.values.begin()));
  twobody::RunOptions cuda;
  cuda.backend = "cuda";
  EXPECT_THROW(twobody::vector_matrix(a, nullptr, m, cuda), twobody::Error);
}

// Streamed to .npy and HDF5 a block of rows at a time (1, 4 and the default), A x A and A x B: the
// in-memory entries bit for bit; a matrix over the in-memory budget goes to a file, not to memory.
TEST(MutualInformation, StreamedFilesEqualMemoryWhateverTheBlock) {
  const twobody::VectorSet a = as_set(rows(23, 90, 5)), b = as_set(rows(11, 90, 6));
  const auto dir = std::filesystem::temp_directory_path() / ("twobody-mi-" + std::to_string(::getpid()));
  std::filesystem::create_directories(dir);
  for (const twobody::VectorSet* other : {static_cast<const twobody::VectorSet*>(nullptr), &b}) {
    twobody::MatrixOptions m;
    m.kernel = "mi";
    const auto host = twobody::vector_matrix(a, other, m);
    for (const char* ext : {".npy", ".h5"}) {
      for (const std::size_t block : {std::size_t{1}, std::size_t{4}, std::size_t{0}}) {
        SCOPED_TRACE(std::string(ext) + " block " + std::to_string(block) + (other ? " cross" : " self"));
        m.block_rows = block;
        m.output = (dir / (std::string("m") + std::to_string(block) + ext)).string();
        const auto r = twobody::vector_matrix(a, other, m);
        EXPECT_TRUE(r.values.empty());
        EXPECT_NE(r.info.plan.find("a block of rows at a time"), std::string::npos) << r.info.plan;
        const VectorSet back = twobody::read_vectors(std::string(ext) == ".h5" ? m.output + ":/matrix" : m.output);
        ASSERT_EQ(back.size(), host.rows);
        for (std::size_t i = 0; i < host.rows; ++i) {
          std::vector<double> row(host.cols);
          back.row_f64(i, row.data());
          ASSERT_EQ(0, std::memcmp(row.data(), &host.values[i * host.cols], host.cols * sizeof(double))) << "row " << i;
        }
      }
    }
  }
  ::setenv("TWOBODY_MATRIX_HOST_BYTES", "1000", 1);
  twobody::MatrixOptions m;
  m.kernel = "mi";
  EXPECT_THROW(twobody::vector_matrix(a, nullptr, m), twobody::Error);
  m.output = (dir / "budget.npy").string();
  EXPECT_NO_THROW(twobody::vector_matrix(a, nullptr, m));
  ::unsetenv("TWOBODY_MATRIX_HOST_BYTES");
  m.summation = twobody::MatrixSummation::Gemm;
  EXPECT_THROW(twobody::vector_matrix(a, nullptr, m), twobody::Error);
  std::filesystem::remove_all(dir);
}

}  // namespace
