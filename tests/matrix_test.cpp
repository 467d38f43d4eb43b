// All-pairs matrices of vectors (twobody/matrices.hpp) against the kernels' float64 rule written
// apart (oracle/matrix_kernels.hpp), bit for bit: every named kernel, d from 1 to 5,419, auto and
// cross, float16/32/64 rows, adversarial rows; the same bits at any thread count and block size;
// the .npy and HDF5 sinks against memory, byte for byte; and every bad input's error.
#include <gtest/gtest.h>

#include <bit>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <random>
#include <sstream>
#include <string>
#include <vector>

#include "oracle/matrix_kernels.hpp"
#include "test_support.hpp"
#include "twobody/detail/engine/backend.hpp"
#include "twobody/error.hpp"
#include "twobody/io.hpp"
#include "twobody/matrices.hpp"

namespace {

using twobody::ErrorKind;
using twobody::MatrixOptions;
using twobody::VectorSet;
using testing_support::expect_error;
using testing_support::fresh_seed;
using testing_support::ScopedEnv;

const char* const kKernels[] = {"l2", "sqeuclidean", "lp", "l1", "chebyshev", "cosine", "dot", "pearson", "spearman"};

std::vector<oracle::Row> rows_of(const VectorSet& v) {
  std::vector<oracle::Row> r(v.size(), oracle::Row(static_cast<std::size_t>(v.dim())));
  for (std::size_t i = 0; i < v.size(); ++i) v.row_f64(i, r[i].data());
  return r;
}

VectorSet gaussian(std::size_t n, int d, std::mt19937_64& rng, double offset = 0) {
  std::normal_distribution<double> g;
  std::vector<double> x(n * static_cast<std::size_t>(d));
  for (double& v : x) v = offset + g(rng);
  return VectorSet::from_rows(std::move(x), n, d);
}

// Equal bits, or both NaN.
bool same(double x, double y) { return (std::isnan(x) && std::isnan(y)) || std::bit_cast<std::uint64_t>(x) == std::bit_cast<std::uint64_t>(y); }

void expect_rule(const VectorSet& a, const VectorSet* b, const std::string& kernel, double p = 3, int threads = 0,
                 std::size_t block = 0) {
  MatrixOptions m;
  m.kernel = kernel;
  m.p = p;
  m.block_rows = block;
  twobody::RunOptions run;
  run.threads = threads;
  const twobody::MatrixResult r = twobody::vector_matrix(a, b, m, run);
  auto ra = rows_of(a), rb = b ? rows_of(*b) : ra;
  std::string rule = kernel;
  if (kernel == "spearman") {  // (the ranks once a row: the oracle ranks in O(d^2))
    for (auto* rows : {&ra, &rb})
      for (auto& x : *rows) x = oracle::ranks_of(x);
    rule = "pearson";
  }
  ASSERT_EQ(r.rows, ra.size());
  ASSERT_EQ(r.cols, rb.size());
  std::size_t wrong = 0;
  for (std::size_t i = 0; i < r.rows; ++i)
    for (std::size_t j = 0; j < r.cols; ++j) {
      const double want = oracle::kernel(rule, ra[i], rb[j], p), got = r.values[i * r.cols + j];
      if (!same(want, got) && wrong++ < 3)
        ADD_FAILURE() << kernel << " d=" << a.dim() << " (" << i << ", " << j << "): " << got << " != rule " << want;
    }
  EXPECT_EQ(wrong, 0u) << kernel << " d=" << a.dim();
}

// Results of 32 MiB and more live in their own huge-page mappings (engine/value_memory.cpp):
// sizes across the threshold hold their values through growth, copies and moves.
TEST(ResultMemory, LargeBlocksHoldTheirValuesThroughGrowthCopiesAndMoves) {
  for (const std::size_t n : {std::size_t{1000}, (std::size_t{32} << 20) / 8 - 1, (std::size_t{32} << 20) / 8,
                              (std::size_t{33} << 20) / 8 + 3}) {
    SCOPED_TRACE(n);
    twobody::MatrixValues v(n);
    for (std::size_t i = 0; i < n; ++i) v[i] = static_cast<double>(i) * 0.5;
    EXPECT_EQ(reinterpret_cast<std::uintptr_t>(v.data()) % alignof(double), 0u);
    v.resize(n + (std::size_t{5} << 20));  // (a reallocation: the old block freed by its own size)
    v.back() = -1;
    const twobody::MatrixValues copy = v;
    twobody::MatrixValues moved = std::move(v);
    for (std::size_t i = 0; i < n; i += 4099) {
      ASSERT_EQ(copy[i], static_cast<double>(i) * 0.5);
      ASSERT_EQ(moved[i], copy[i]);
    }
    EXPECT_EQ(moved.back(), -1);
  }
}

TEST(VectorMatrix, EveryKernelIsTheRuleBitForBit) {
  const std::uint64_t seed = fresh_seed();
  SCOPED_TRACE(seed);
  std::mt19937_64 rng(seed);
  for (int d : {1, 3, 17, 960}) {
    const VectorSet a = gaussian(37, d, rng), b = gaussian(21, d, rng);
    for (const char* k : kKernels) {
      expect_rule(a, nullptr, k);
      expect_rule(a, &b, k);
    }
  }
}

TEST(VectorMatrix, SeedDimensionSmallN) {
  std::mt19937_64 rng(fresh_seed());
  const VectorSet a = gaussian(9, 5419, rng), b = gaussian(5, 5419, rng);
  for (const char* k : kKernels) expect_rule(a, k == std::string("dot") ? &b : nullptr, k);
}

TEST(VectorMatrix, HalfAndSingleRowsArePromotedExactly) {
  std::mt19937_64 rng(fresh_seed());
  std::uniform_real_distribution<float> u(-4, 4);
  std::vector<float> f(31 * 40);
  for (float& v : f) v = u(rng);
  const VectorSet a = VectorSet::from_rows(f, 31, 40);
  // float16: integers and halves, exact in binary16.
  std::vector<std::uint16_t> h(19 * 40);
  for (auto& v : h) v = static_cast<std::uint16_t>(0x3c00 + (rng() % 64) * 0x40);  // 1 … 2 in steps of 1/16
  const VectorSet c = VectorSet::from_half_bits(h, 19, 40);
  for (const char* k : kKernels) {
    expect_rule(a, nullptr, k);
    expect_rule(c, nullptr, k);
  }
}

TEST(VectorMatrix, AdversarialRows) {
  std::mt19937_64 rng(fresh_seed());
  const int d = 23;
  std::vector<double> x(8 * d);
  for (std::size_t k = 0; k < x.size(); ++k) x[k] = 1e6 + static_cast<double>(rng() % 5) / 8;  // ties, a large offset
  for (int k = 0; k < d; ++k) x[static_cast<std::size_t>(k)] = 7.25;                           // a constant row
  for (int k = 0; k < d; ++k) x[static_cast<std::size_t>(d + k)] = 0;                          // a zero row
  std::copy(x.begin() + 2 * d, x.begin() + 3 * d, x.begin() + 3 * d);                           // a duplicate row
  const VectorSet a = VectorSet::from_rows(x, 8, d);
  for (const char* k : kKernels) expect_rule(a, nullptr, k);
  MatrixOptions m;
  m.kernel = "pearson";
  const auto r = twobody::vector_matrix(a, nullptr, m);
  EXPECT_TRUE(std::isnan(r.values[0 * 8 + 5])) << "a constant row's correlation is NaN (0/0), as SciPy's";
  m.kernel = "cosine";
  EXPECT_TRUE(std::isnan(twobody::vector_matrix(a, nullptr, m).values[1 * 8 + 4])) << "a zero row's cosine distance is NaN";
  m.kernel = "spearman";
  EXPECT_TRUE(std::isnan(twobody::vector_matrix(a, nullptr, m).values[0 * 8 + 3]));
  // One row; a pair of sets of one row.
  const VectorSet one = a.slice(2, 1);
  for (const char* k : kKernels) {
    expect_rule(one, nullptr, k);
    expect_rule(one, &one, k);
  }
}

TEST(VectorMatrix, ExpressionKernels) {
  std::mt19937_64 rng(fresh_seed());
  const VectorSet a = gaussian(29, 33, rng), b = gaussian(18, 33, rng);
  const auto ra = rows_of(a), rb = rows_of(b);
  // A dot-like expression (the tiles), a decomposable one the tiles do not take (the interpreter),
  // both symmetric bit for bit by their text (auto computes the half and mirrors it), an
  // asymmetric one (auto computes every entry).
  const struct {
    const char* text;
    double (*rule)(const oracle::Row&, const oracle::Row&);
    bool symmetric;
  } cases[] = {
      {"dot(a, b) / d", [](const oracle::Row& x, const oracle::Row& y) { return oracle::dot_of(x, y) / 33; }, true},
      {"sum(abs(a - b)^3)",
       [](const oracle::Row& x, const oracle::Row& y) {
         double s = 0;
         for (std::size_t k = 0; k < x.size(); ++k) {
           const double t = std::fabs(x[k] - y[k]);
           s += t * t * t;
         }
         return s;
       },
       true},
      {"sum(a - b) + a[0]",
       [](const oracle::Row& x, const oracle::Row& y) {
         double s = 0;
         for (std::size_t k = 0; k < x.size(); ++k) s += x[k] - y[k];
         return s + x[0];
       },
       false},
  };
  for (const auto& c : cases)
    for (const VectorSet* other : {static_cast<const VectorSet*>(nullptr), &b}) {
      MatrixOptions m;
      m.kernel = c.text;
      const auto r = twobody::vector_matrix(a, other, m);
      if (!other) {
        EXPECT_EQ(r.info.pairs_evaluated, c.symmetric ? 29u * 30u / 2 : 29u * 29u) << c.text;
        EXPECT_EQ(r.info.plan.find("the other mirrored") != std::string::npos, c.symmetric) << c.text << "\n" << r.info.plan;
      }
      const auto& rows = other ? rb : ra;
      for (std::size_t i = 0; i < r.rows; ++i)
        for (std::size_t j = 0; j < r.cols; ++j) ASSERT_TRUE(same(r.values[i * r.cols + j], c.rule(ra[i], rows[j]))) << c.text;
    }
}

TEST(VectorMatrix, SameBitsAtAnyThreadsAndBlocks) {
  std::mt19937_64 rng(fresh_seed());
  const VectorSet a = gaussian(70, 300, rng);
  for (const char* k : {"pearson", "l2", "chebyshev", "lp"}) {
    MatrixOptions m;
    m.kernel = k;
    twobody::RunOptions one;
    one.threads = 1;
    const auto ref = twobody::vector_matrix(a, nullptr, m, one).values;
    for (std::size_t block : {1, 4, 7, 64}) {
      m.block_rows = block;
      const auto r = twobody::vector_matrix(a, nullptr, m).values;
      ASSERT_EQ(0, std::memcmp(r.data(), ref.data(), ref.size() * sizeof(double))) << k << " block " << block;
    }
  }
}

std::string file_bytes(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

// auto: the CPU for a matrix it estimates within a GPU's start-up and link (the plan says so, and
// the device is not asked); beyond that the GPU where one runs generated kernels (explain only).
TEST(VectorMatrix, AutoWeighsTheGpuByTheCpusEstimate) {
  std::mt19937_64 rng(fresh_seed());
  MatrixOptions m;
  m.kernel = "l2";
  const std::string small = twobody::explain_vector_matrix(gaussian(40, 8, rng), nullptr, m);
  EXPECT_NE(small.find("auto: the cpu (the cpu's estimate about"), std::string::npos) << small;
  m.output = (std::filesystem::temp_directory_path() / ("twobody-auto-" + std::to_string(fresh_seed()) + ".npy")).string();
  const std::string large = twobody::explain_vector_matrix(gaussian(20000, 512, rng), nullptr, m);
  EXPECT_TRUE(large.find("auto: the GPU (the cpu's estimate") != std::string::npos ||
              large.find("no GPU for generated kernels") != std::string::npos)
      << large;
  EXPECT_FALSE(std::filesystem::exists(m.output));  // (an explanation writes nothing)
}

TEST(VectorMatrix, FilesEqualMemoryByteForByte) {
  std::mt19937_64 rng(fresh_seed());
  const VectorSet a = gaussian(45, 20, rng), b = gaussian(31, 20, rng);
  const auto dir = std::filesystem::temp_directory_path() / ("twobody-matrix-" + std::to_string(fresh_seed()));
  std::filesystem::create_directories(dir);
  for (const VectorSet* other : {static_cast<const VectorSet*>(nullptr), &b}) {
    MatrixOptions m;
    m.kernel = "cosine";
    const auto host = twobody::vector_matrix(a, other, m);
    for (const char* ext : {".npy", ".h5"}) {
      std::string first;
      for (std::size_t block : {1, 3, 0}) {
        m.block_rows = block;
        m.output = (dir / (std::string("m") + std::to_string(block) + ext)).string();
        const auto r = twobody::vector_matrix(a, other, m);
        EXPECT_TRUE(r.values.empty());
        const std::string read = std::string(ext) == ".h5" ? m.output + ":/matrix" : m.output;
        const VectorSet back = twobody::read_vectors(read);
        ASSERT_EQ(back.size(), host.rows);
        for (std::size_t i = 0; i < host.rows; ++i) {
          std::vector<double> row(host.cols);
          back.row_f64(i, row.data());
          ASSERT_EQ(0, std::memcmp(row.data(), &host.values[i * host.cols], host.cols * sizeof(double))) << ext;
        }
        if (std::string(ext) == ".npy") {
          if (first.empty()) first = file_bytes(m.output);
          EXPECT_EQ(first, file_bytes(m.output)) << "block " << block;
        }
      }
    }
    // float32: one rounding of every value.
    m.output = (dir / "f32.npy").string();
    m.dtype = twobody::Element::F32;
    twobody::vector_matrix(a, other, m);
    const VectorSet back = twobody::read_vectors(m.output);
    EXPECT_EQ(back.element(), twobody::Element::F32);
    std::vector<double> row(host.cols);
    back.row_f64(host.rows - 1, row.data());
    for (std::size_t j = 0; j < host.cols; ++j)
      EXPECT_EQ(row[j], static_cast<double>(static_cast<float>(host.values[(host.rows - 1) * host.cols + j])));
  }
  std::filesystem::remove_all(dir);
}

TEST(VectorMatrix, BadInputsAreClearErrors) {
  std::mt19937_64 rng(fresh_seed());
  const VectorSet a = gaussian(5, 4, rng), b = gaussian(5, 3, rng);
  MatrixOptions m;
  expect_error(ErrorKind::Input, "dimensions", [&] { twobody::vector_matrix(a, &b, m); });
  std::vector<double> x(20, 1.0);
  x[7] = std::nan("");
  const VectorSet bad = VectorSet::from_rows(x, 5, 4);
  expect_error(ErrorKind::Input, "first set", [&] { twobody::vector_matrix(bad, nullptr, m); });
  m.kernel = "lp";
  m.p = 0.5;
  expect_error(ErrorKind::Config, "p >= 1", [&] { twobody::vector_matrix(a, nullptr, m); });
  m.kernel = "euclidian";
  expect_error(ErrorKind::Config, "unknown kernel", [&] { twobody::vector_matrix(a, nullptr, m); });
  m.kernel = "sum(a - b) < 0";
  expect_error(ErrorKind::Config, "predicate", [&] { twobody::vector_matrix(a, nullptr, m); });
  m.kernel = "pearson";
  if (!twobody::make_cuda_backend())  // (with a GPU, tests/cuda_matrix_test.cpp runs it there)
    expect_error(ErrorKind::Backend, "the cuda backend was requested for a matrix, but",
                 [&] { twobody::vector_matrix(a, nullptr, m, testing_support::on("cuda")); });
  expect_error(ErrorKind::Backend, "on the CPU or on one GPU", [&] { twobody::vector_matrix(a, nullptr, m, testing_support::on("hybrid")); });
  {
    const ScopedEnv budget("TWOBODY_MATRIX_HOST_BYTES", "100");
    expect_error(ErrorKind::Resource, "-o FILE.npy", [&] { twobody::vector_matrix(a, nullptr, m); });
  }
  const auto dir = std::filesystem::temp_directory_path() / ("twobody-matrix-bad-" + std::to_string(fresh_seed()));
  std::filesystem::create_directories(dir);
  m.output = (dir / "missing" / "m.npy").string();
  expect_error(ErrorKind::Output, "m.npy", [&] { twobody::vector_matrix(a, nullptr, m); });
  // A run that fails part-way (cancelled) leaves no file and no temporary.
  m.output = (dir / "m.npy").string();
  twobody::RunOptions cancel;
  cancel.progress = [](double) { throw twobody::Error(ErrorKind::Resource, "cancelled"); };
  m.block_rows = 1;
  expect_error(ErrorKind::Resource, "cancelled", [&] { twobody::vector_matrix(a, nullptr, m, cancel); });
  EXPECT_TRUE(std::filesystem::is_empty(dir));
  std::filesystem::remove_all(dir);
}

}  // namespace
