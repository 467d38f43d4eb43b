// VectorSet (owned, borrowed, sliced; float16 promotion) and the vector readers and writers: every
// format round-trips random rows bit for bit with its element type, and every malformed file ends
// in an Error(Input) naming the file, the row and, for a value, the column.
#include <gtest/gtest.h>

#include <fmt/format.h>
#include <unistd.h>

#include <bit>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <fstream>
#include <limits>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "test_support.hpp"
#include "twobody/error.hpp"
#include "twobody/io.hpp"
#include "twobody/vectors.hpp"

#ifdef TWOBODY_HAVE_HDF5
#include <hdf5.h>
#endif

using namespace twobody;
using testing_support::expect_error;

namespace {

// Per process: ctest runs the tests of this file side by side.
std::string temp(const std::string& name) { return fmt::format("{}vectors-{}-{}", ::testing::TempDir(), ::getpid(), name); }

std::string write_bytes(const std::string& name, const std::string& bytes) {
  const std::string path = temp(name);
  std::ofstream(path, std::ios::binary) << bytes;
  return path;
}

template <class T>
void append(std::string& s, const T& v) {
  s.append(reinterpret_cast<const char*>(&v), sizeof(T));
}

// A .npy file of `header` (the dict) and raw `data`, as numpy.save lays it out.
std::string npy_file(const std::string& header_dict, const std::string& data) {
  std::string header = header_dict;
  const std::size_t total = (10 + header.size() + 1 + 63) / 64 * 64;
  header.resize(total - 10 - 1, ' ');
  header += '\n';
  std::string s("\x93NUMPY\x01\x00", 8);
  append(s, static_cast<std::uint16_t>(header.size()));
  return s + header + data;
}

template <class T>
std::string raw(const std::vector<T>& v) {
  return std::string(reinterpret_cast<const char*>(v.data()), v.size() * sizeof(T));
}

// A .fvecs-style file: each row its dimension, then its values.
template <class T>
std::string vecs_rows(const std::vector<std::vector<T>>& rows) {
  std::string s;
  for (const auto& r : rows) {
    append(s, static_cast<std::int32_t>(r.size()));
    s += raw(r);
  }
  return s;
}

std::uint64_t bits_of(double x) { return std::bit_cast<std::uint64_t>(x); }

// Every value of `a` and `b` equal as float64 (bit for bit: -0 and 0 differ), and their shapes.
void expect_same_values(const VectorSet& a, const VectorSet& b) {
  ASSERT_EQ(a.size(), b.size());
  ASSERT_EQ(a.dim(), b.dim());
  std::vector<double> ra(static_cast<std::size_t>(a.dim())), rb(ra.size());
  for (std::size_t i = 0; i < a.size(); ++i) {
    a.row_f64(i, ra.data());
    b.row_f64(i, rb.data());
    for (std::size_t k = 0; k < ra.size(); ++k)
      ASSERT_EQ(bits_of(ra[k]), bits_of(rb[k])) << "row " << i + 1 << ", column " << k + 1 << ": " << ra[k] << " vs " << rb[k];
  }
}

// Rows of each element type drawn at random: float64 of any exponent, float32, finite float16
// bit patterns (subnormals and -0 included).
struct RandomRows {
  std::mt19937_64 rng;
  explicit RandomRows(std::uint64_t seed) : rng(seed) {}

  VectorSet f64(std::size_t n, int dim) {
    std::uniform_real_distribution<double> mantissa(-1, 1);
    std::uniform_int_distribution<int> exponent(-60, 60);
    std::vector<double> v(n * static_cast<std::size_t>(dim));
    for (double& x : v) x = std::ldexp(mantissa(rng), exponent(rng));
    return VectorSet::from_rows(std::move(v), n, dim);
  }
  VectorSet f32(std::size_t n, int dim) {
    std::uniform_real_distribution<float> u(-1e4f, 1e4f);
    std::vector<float> v(n * static_cast<std::size_t>(dim));
    for (float& x : v) x = u(rng);
    return VectorSet::from_rows(std::move(v), n, dim);
  }
  VectorSet f16(std::size_t n, int dim) {
    std::uniform_int_distribution<unsigned> bits(0, 0xffff);
    std::vector<std::uint16_t> v(n * static_cast<std::size_t>(dim));
    for (auto& h : v) {
      do h = static_cast<std::uint16_t>(bits(rng));
      while ((h & 0x7c00) == 0x7c00);  // not infinity or NaN
    }
    return VectorSet::from_half_bits(std::move(v), n, dim);
  }
  // Float64 values that float32 holds exactly, or integers in [lo, hi].
  VectorSet f64_of_floats(std::size_t n, int dim) {
    const VectorSet f = f32(n, dim);
    std::vector<double> v(n * static_cast<std::size_t>(dim));
    for (std::size_t i = 0; i < n; ++i) f.row_f64(i, v.data() + i * static_cast<std::size_t>(dim));
    return VectorSet::from_rows(std::move(v), n, dim);
  }
  std::vector<double> integers(std::size_t count, double lo, double hi) {
    std::uniform_int_distribution<std::int64_t> u(static_cast<std::int64_t>(lo), static_cast<std::int64_t>(hi));
    std::vector<double> v(count);
    for (double& x : v) x = static_cast<double>(u(rng));
    return v;
  }
};

constexpr int kDims[] = {1, 3, 17, 128, 960};
// Enough rows at the widest dimensions for the parallel paths (more than 10^5 values).
std::size_t rows_for(int dim) { return dim >= 128 ? 150 : 301; }

}  // namespace

// ---- VectorSet -------------------------------------------------------------------------------

TEST(VectorSet, FromRowsKeepsShapeTypeAndValues) {
  const VectorSet d = VectorSet::from_rows(std::vector<double>{1, 2, 3, 4, 5, 6}, 2, 3);
  EXPECT_EQ(d.size(), 2u);
  EXPECT_EQ(d.dim(), 3);
  EXPECT_EQ(d.element(), Element::F64);
  EXPECT_EQ(d.row_stride(), 3u);
  EXPECT_FALSE(d.borrowed());
  EXPECT_EQ(static_cast<const double*>(d.row(1))[2], 6.0);
  const VectorSet f = VectorSet::from_rows(std::vector<float>{1.5f, -2.5f}, 1, 2);
  EXPECT_EQ(f.element(), Element::F32);
  double r[2];
  f.row_f64(0, r);
  EXPECT_EQ(r[0], 1.5);
  EXPECT_EQ(r[1], -2.5);
  const VectorSet h = VectorSet::from_half_bits(std::vector<std::uint16_t>{0x3c00, 0xc000}, 2, 1);
  EXPECT_EQ(h.element(), Element::F16);
  h.row_f64(1, r);
  EXPECT_EQ(r[0], -2.0);
  EXPECT_THROW(VectorSet::from_rows(std::vector<double>{1, 2, 3}, 2, 2), Error);
  expect_error(ErrorKind::Config, "at least one dimension", [] { VectorSet::from_rows(std::vector<double>{}, 0, 0); });
  EXPECT_EQ(std::string(to_string(Element::F16)), "float16");
  EXPECT_EQ(element_bytes(Element::F16), 2u);
  EXPECT_EQ(element_bytes(Element::F32), 4u);
  EXPECT_EQ(element_bytes(Element::F64), 8u);
}

TEST(VectorSet, BorrowKeepsItsOwnerAliveAndReadsStridedRows) {
  // Rows of 3 values in a buffer of 4 a row (a padded array): the fourth never read.
  auto buffer = std::make_shared<std::vector<float>>(std::vector<float>{1, 2, 3, -1, 4, 5, 6, -1, 7, 8, 9, -1});
  std::weak_ptr<std::vector<float>> alive = buffer;
  VectorSet slice;
  {
    const VectorSet v = VectorSet::borrow(buffer->data(), Element::F32, 3, 3, 4, buffer);
    buffer.reset();
    EXPECT_FALSE(alive.expired());  // the set holds the owner
    EXPECT_TRUE(v.borrowed());
    EXPECT_EQ(v.row_stride(), 4u);
    double r[3];
    v.row_f64(2, r);
    EXPECT_EQ(r[0], 7.0);
    EXPECT_EQ(r[2], 9.0);
    slice = v.slice(1, 2);
  }
  EXPECT_FALSE(alive.expired());  // ... and so does a slice, once the set is gone
  double r[3];
  slice.row_f64(0, r);
  EXPECT_EQ(r[0], 4.0);
  slice = VectorSet();
  EXPECT_TRUE(alive.expired());  // the last holder gone, the owner ends
  // Without an owner: the caller's memory, read in place.
  const double local[] = {1, 2};
  const VectorSet unowned = VectorSet::borrow(local, Element::F64, 2, 1, 1, nullptr);
  EXPECT_EQ(unowned.row(1), &local[1]);
  EXPECT_THROW(VectorSet::borrow(local, Element::F64, 1, 2, 1, nullptr), Error);  // stride below the dimension
}

TEST(VectorSet, SlicesShareStorage) {
  const VectorSet v = VectorSet::from_rows(std::vector<double>{0, 1, 2, 3, 4, 5, 6, 7}, 4, 2);
  const VectorSet s = v.slice(1, 2);
  EXPECT_EQ(s.size(), 2u);
  EXPECT_EQ(s.row(0), v.row(1));
  EXPECT_EQ(s.row(1), v.row(2));
  EXPECT_EQ(v.slice(4, 0).size(), 0u);
  const VectorSet inner = s.slice(1, 1);
  EXPECT_EQ(inner.row(0), v.row(2));
  EXPECT_THROW(v.slice(3, 2), Error);
  EXPECT_THROW(v.slice(5, 0), Error);
}

TEST(VectorSet, HalfToDoubleIsExactOnEveryClass) {
  EXPECT_EQ(half_to_double(0x0000), 0.0);
  EXPECT_FALSE(std::signbit(half_to_double(0x0000)));
  EXPECT_EQ(half_to_double(0x8000), 0.0);
  EXPECT_TRUE(std::signbit(half_to_double(0x8000)));  // -0 kept
  EXPECT_EQ(half_to_double(0x0001), std::ldexp(1.0, -24));  // smallest subnormal
  EXPECT_EQ(half_to_double(0x03ff), std::ldexp(1023.0, -24));  // largest subnormal
  EXPECT_EQ(half_to_double(0x8001), -std::ldexp(1.0, -24));
  EXPECT_EQ(half_to_double(0x0400), std::ldexp(1.0, -14));  // smallest normal
  EXPECT_EQ(half_to_double(0x3c00), 1.0);
  EXPECT_EQ(half_to_double(0x3555), 0.333251953125);
  EXPECT_EQ(half_to_double(0xc000), -2.0);
  EXPECT_EQ(half_to_double(0x7bff), 65504.0);  // the largest half
  EXPECT_EQ(half_to_double(0xfbff), -65504.0);
  EXPECT_EQ(half_to_double(0x7c00), std::numeric_limits<double>::infinity());
  EXPECT_EQ(half_to_double(0xfc00), -std::numeric_limits<double>::infinity());
  EXPECT_TRUE(std::isnan(half_to_double(0x7e00)));
  EXPECT_TRUE(std::isnan(half_to_double(0xfc01)));
  // Every finite half against the definition: (-1)^s 2^(e-15) (1 + m/1024), or 2^-14 m/1024.
  for (unsigned h = 0; h < 0x10000; ++h) {
    const unsigned e = (h >> 10) & 0x1f, m = h & 0x3ff;
    if (e == 31) continue;
    const double magnitude = e == 0 ? std::ldexp(m / 1024.0, -14) : std::ldexp(1 + m / 1024.0, static_cast<int>(e) - 15);
    ASSERT_EQ(half_to_double(static_cast<std::uint16_t>(h)), (h & 0x8000) ? -magnitude : magnitude) << std::hex << h;
  }
}

TEST(VectorSet, CheckFiniteNamesRowAndColumnAndPointsConvert) {
  std::vector<double> v(5 * 4, 1.0);
  v[2 * 4 + 3] = std::nan("");
  v[4 * 4 + 0] = HUGE_VAL;
  expect_error(ErrorKind::Input, "src: row 3, column 4: nan", [&] { VectorSet::from_rows(v, 5, 4).check_finite("src"); });
  const VectorSet h = VectorSet::from_half_bits(std::vector<std::uint16_t>{0x3c00, 0x7c00}, 1, 2);
  expect_error(ErrorKind::Input, "h: row 1, column 2: inf", [&] { h.check_finite("h"); });
  const VectorSet p3 = VectorSet::from_rows(std::vector<double>{1, 2, 3, 4, 5, 6}, 2, 3);
  const PointSet p = p3.to_points();
  EXPECT_EQ(p.dim(), 3);
  EXPECT_EQ(p.coord(2)[1], 6.0);
  expect_same_values(VectorSet::from_points(p), p3);
  expect_error(ErrorKind::Config, "beyond the point paths",
               [] { VectorSet::from_rows(std::vector<double>(9, 0.0), 1, 9).to_points(); });
}

TEST(VectorSet, ContentHashFollowsTheValuesNotTheLayout) {
  const VectorSet a = VectorSet::from_rows(std::vector<double>{1, 2, 3, 4}, 2, 2);
  const double padded[] = {1, 2, 99, 3, 4, 99};
  const VectorSet b = VectorSet::borrow(padded, Element::F64, 2, 2, 3, nullptr);
  EXPECT_EQ(content_hash(a), content_hash(b));
  EXPECT_NE(content_hash(a), content_hash(VectorSet::from_rows(std::vector<double>{1, 2, 3, 5}, 2, 2)));
  EXPECT_NE(content_hash(a), content_hash(VectorSet::from_rows(std::vector<double>{1, 2, 3, 4}, 1, 4)));
  EXPECT_NE(content_hash(a), content_hash(VectorSet::from_rows(std::vector<float>{1, 2, 3, 4}, 2, 2)));
}

// ---- formats ---------------------------------------------------------------------------------

TEST(VectorFiles, FormatsByExtension) {
  EXPECT_EQ(format_of("base.fvecs"), FileFormat::Fvecs);
  EXPECT_EQ(format_of("SIFT.BVECS"), FileFormat::Bvecs);
  EXPECT_EQ(format_of("gt.ivecs"), FileFormat::Ivecs);
  EXPECT_EQ(format_of(".fvecs"), FileFormat::Text);  // an extension alone is a name
  for (FileFormat f : {FileFormat::Fvecs, FileFormat::Bvecs, FileFormat::Ivecs}) EXPECT_TRUE(format_supported(f));
}

TEST(VectorFiles, NpyRoundTripsEveryElementType) {
  const std::uint64_t seed = testing_support::fresh_seed();
  SCOPED_TRACE(fmt::format("seed {}", seed));
  RandomRows random(seed);
  for (int dim : kDims) {
    SCOPED_TRACE(fmt::format("dim {}", dim));
    const std::size_t n = rows_for(dim);
    for (const VectorSet& v : {random.f16(n, dim), random.f32(n, dim), random.f64(n, dim)}) {
      const std::string path = temp(fmt::format("round-{}.npy", to_string(v.element())));
      write_vectors(path, v);
      const VectorSet r = read_vectors(path);
      EXPECT_EQ(r.element(), v.element());
      EXPECT_EQ(content_hash(r), content_hash(v));  // every value's bits
      expect_same_values(r, v);
    }
  }
}

TEST(VectorFiles, NpyIsReadByNumpysLayouts) {
  // Fortran order: the columns one after another.
  const std::vector<float> columns = {1, 2, 3, 10, 20, 30};
  const VectorSet f = read_vectors(
      write_bytes("fortran.npy", npy_file("{'descr': '<f4', 'fortran_order': True, 'shape': (3, 2), }", raw(columns))));
  expect_same_values(f, VectorSet::from_rows(std::vector<float>{1, 10, 2, 20, 3, 30}, 3, 2));
  EXPECT_EQ(f.element(), Element::F32);
  const std::vector<std::uint16_t> halves = {0x3c00, 0x4000, 0x4200, 0xbc00};
  const VectorSet h = read_vectors(
      write_bytes("fortran16.npy", npy_file("{'descr': '<f2', 'fortran_order': True, 'shape': (2, 2), }", raw(halves))));
  EXPECT_EQ(h.element(), Element::F16);
  expect_same_values(h, VectorSet::from_rows(std::vector<double>{1, 3, 2, -1}, 2, 2));
  // 1-D: n vectors of one dimension.
  const VectorSet one = read_vectors(
      write_bytes("one.npy", npy_file("{'descr': '<f8', 'fortran_order': False, 'shape': (4,), }", raw(std::vector<double>{1, 2, 3, 4}))));
  EXPECT_EQ(one.dim(), 1);
  EXPECT_EQ(one.size(), 4u);
  // Integers become float64, exactly.
  const VectorSet i32 = read_vectors(write_bytes(
      "i32.npy", npy_file("{'descr': '<i4', 'fortran_order': False, 'shape': (2, 2), }", raw(std::vector<std::int32_t>{-7, 2147483647, -2147483647 - 1, 0}))));
  EXPECT_EQ(i32.element(), Element::F64);
  expect_same_values(i32, VectorSet::from_rows(std::vector<double>{-7, 2147483647.0, -2147483648.0, 0}, 2, 2));
  const std::int64_t limit = std::int64_t{1} << 53;
  const VectorSet i64 = read_vectors(write_bytes(
      "i64.npy", npy_file("{'descr': '<i8', 'fortran_order': False, 'shape': (1, 2), }", raw(std::vector<std::int64_t>{limit, -limit}))));
  expect_same_values(i64, VectorSet::from_rows(std::vector<double>{9007199254740992.0, -9007199254740992.0}, 1, 2));
  expect_error(ErrorKind::Input, "row 2, column 1: 9007199254740993 is beyond 2^53", [&] {
    read_vectors(write_bytes("big.npy", npy_file("{'descr': '<i8', 'fortran_order': False, 'shape': (2, 2), }",
                                                 raw(std::vector<std::int64_t>{1, 2, limit + 1, 4}))));
  });
  expect_error(ErrorKind::Input, "row 1, column 2: -9007199254740993", [&] {
    read_vectors(write_bytes("small.npy", npy_file("{'descr': '<i8', 'fortran_order': True, 'shape': (2, 2), }",
                                                   raw(std::vector<std::int64_t>{1, 2, -limit - 1, 4}))));
  });
  expect_error(ErrorKind::Input, "'<u1' (unsigned integer of 1 bytes) is not supported: float16, float32", [&] {
    read_vectors(write_bytes("u1.npy", npy_file("{'descr': '<u1', 'fortran_order': False, 'shape': (2,), }", "ab")));
  });
  expect_error(ErrorKind::Input, "big-endian", [&] {
    read_vectors(write_bytes("be.npy", npy_file("{'descr': '>f4', 'fortran_order': False, 'shape': (1,), }", "abcd")));
  });
  expect_error(ErrorKind::Input, "shorter than its 3 x 2 array", [&] {
    read_vectors(write_bytes("short.npy", npy_file("{'descr': '<f4', 'fortran_order': False, 'shape': (3, 2), }", raw(columns).substr(4))));
  });
  expect_error(ErrorKind::Input, "nan.npy: row 2, column 1: nan", [&] {
    read_vectors(write_bytes("nan.npy", npy_file("{'descr': '<f4', 'fortran_order': False, 'shape': (2, 2), }",
                                                   raw(std::vector<float>{1, 2, NAN, 4}))));
  });
  // The catalogue reader still refuses float16 (its columns are float64 points; no change there).
  expect_error(ErrorKind::Input, "not supported: float64, float32, int64 or int32", [&] {
    read_points(write_bytes("half.npy", npy_file("{'descr': '<f2', 'fortran_order': False, 'shape': (2,), }", raw(halves).substr(0, 4))));
  });
}

TEST(VectorFiles, ColumnsAreChosenInEveryFormat) {
  const std::string path = temp("cols.npy");
  write_vectors(path, VectorSet::from_rows(std::vector<float>{1, 2, 3, 4, 5, 6}, 2, 3));
  ReadOptions o;
  o.columns = {3, 1};
  const VectorSet v = read_vectors(path, o);
  EXPECT_EQ(v.element(), Element::F32);  // kept through the selection
  expect_same_values(v, VectorSet::from_rows(std::vector<double>{3, 1, 6, 4}, 2, 2));
  ReadOptions weighted;
  weighted.weight_column = 3;  // a weight column is not a coordinate of the vectors
  EXPECT_EQ(read_vectors(path, weighted).dim(), 2);
  ReadOptions beyond;
  beyond.columns = {4};
  expect_error(ErrorKind::Input, "column 4 was asked for but the file has 3", [&] { read_vectors(path, beyond); });
  ReadOptions named;
  named.column_names = {"x"};
  expect_error(ErrorKind::Input, "the file has no column names", [&] { read_vectors(path, named); });
  // A NaN in a column left out does not matter.
  const std::string nan_path = temp("nan-col.npy");
  write_vectors(nan_path, VectorSet::from_rows(std::vector<double>{1, NAN, 3, 4}, 2, 2));
  ReadOptions first;
  first.columns = {1};
  EXPECT_EQ(read_vectors(nan_path, first).size(), 2u);
  expect_error(ErrorKind::Input, "row 1, column 2: nan", [&] { read_vectors(nan_path); });
}

TEST(VectorFiles, VecsFilesRoundTrip) {
  const std::uint64_t seed = testing_support::fresh_seed();
  SCOPED_TRACE(fmt::format("seed {}", seed));
  RandomRows random(seed);
  for (int dim : kDims) {
    SCOPED_TRACE(fmt::format("dim {}", dim));
    const std::size_t n = rows_for(dim);
    // .fvecs: float32 as stored; float16 and float32-exact float64 written as float32.
    for (const VectorSet& v : {random.f32(n, dim), random.f16(n, dim), random.f64_of_floats(n, dim)}) {
      const std::string path = temp(fmt::format("round-{}.fvecs", to_string(v.element())));
      write_vectors(path, v);
      const VectorSet r = read_vectors(path);
      EXPECT_EQ(r.element(), Element::F32);
      expect_same_values(r, v);
    }
    const std::size_t values = n * static_cast<std::size_t>(dim);
    const VectorSet bytes = VectorSet::from_rows(random.integers(values, 0, 255), n, dim);
    write_vectors(temp("round.bvecs"), bytes);
    const VectorSet b = read_vectors(temp("round.bvecs"));
    EXPECT_EQ(b.element(), Element::F32);  // uint8 is exact in float32
    expect_same_values(b, bytes);
    const VectorSet ints = VectorSet::from_rows(random.integers(values, -2147483648.0, 2147483647.0), n, dim);
    write_vectors(temp("round.ivecs"), ints);
    const VectorSet i = read_vectors(temp("round.ivecs"));
    EXPECT_EQ(i.element(), Element::F64);
    expect_same_values(i, ints);
  }
  // The file's bytes are the format's: an int32 dimension, then the values.
  write_vectors(temp("bytes.fvecs"), VectorSet::from_rows(std::vector<float>{1.5f, -2}, 1, 2));
  std::ifstream in(temp("bytes.fvecs"), std::ios::binary);
  const std::string got((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  EXPECT_EQ(got, vecs_rows(std::vector<std::vector<float>>{{1.5f, -2.0f}}));
}

TEST(VectorFiles, VecsWritersRefuseValuesTheyCannotHold) {
  std::vector<double> v(3 * 4, 0.5);
  v[1 * 4 + 2] = 0.1;  // not a float32
  expect_error(ErrorKind::Config, "row 2, column 3: 0.1 is not exactly representable as float32", [&] {
    write_vectors(temp("inexact.fvecs"), VectorSet::from_rows(v, 3, 4));
  });
  EXPECT_FALSE(std::ifstream(temp("inexact.fvecs")).good());  // nothing written
  expect_error(ErrorKind::Config, "row 1, column 1: 1e+300", [&] {
    write_vectors(temp("huge.fvecs"), VectorSet::from_rows(std::vector<double>{1e300}, 1, 1));
  });
  expect_error(ErrorKind::Config, "row 1, column 2: 256 is not exactly representable as uint8", [&] {
    write_vectors(temp("wide.bvecs"), VectorSet::from_rows(std::vector<double>{255, 256}, 1, 2));
  });
  expect_error(ErrorKind::Config, "row 1, column 1: 0.5 is not exactly representable as int32", [&] {
    write_vectors(temp("frac.ivecs"), VectorSet::from_rows(std::vector<double>{0.5}, 1, 1));
  });
  expect_error(ErrorKind::Config, "not written as .npz", [&] {
    write_vectors(temp("v.npz"), VectorSet::from_rows(std::vector<double>{1}, 1, 1));
  });
  expect_error(ErrorKind::Config, "no dimension", [&] { write_vectors(temp("none.npy"), VectorSet()); });
  expect_error(ErrorKind::Config, "not written as .fvecs", [&] {
    write_points(temp("points.fvecs"), VectorSet::from_rows(std::vector<double>{1, 2, 3}, 1, 3).to_points());
  });
}

TEST(VectorFiles, MalformedVecsFilesNameTheRow) {
  const std::vector<float> three = {1, 2, 3};
  const std::string good = vecs_rows(std::vector<std::vector<float>>{three, three, three});
  // Truncated in the middle of row 3.
  expect_error(ErrorKind::Input, "cut.fvecs: row 3: the file ends inside the row (10 of its 16 bytes)",
               [&] { read_vectors(write_bytes("cut.fvecs", good.substr(0, 16 * 2 + 10))); });
  // Truncated inside row 2's dimension.
  expect_error(ErrorKind::Input, "cut2.fvecs: row 2: the file ends inside the row (2 of its 16 bytes)",
               [&] { read_vectors(write_bytes("cut2.fvecs", good.substr(0, 16 + 2))); });
  // Row 2 of another dimension, in the middle or at the end.
  const std::vector<float> two = {4, 5};
  expect_error(ErrorKind::Input, "other.fvecs: row 2 has dimension 2, but row 1 has 3", [&] {
    read_vectors(write_bytes("other.fvecs", vecs_rows(std::vector<std::vector<float>>{three, two, three, three})));
  });
  expect_error(ErrorKind::Input, "last.fvecs: row 3 has dimension 2, but row 1 has 3", [&] {
    read_vectors(write_bytes("last.fvecs", vecs_rows(std::vector<std::vector<float>>{three, three, two})));
  });
  expect_error(ErrorKind::Input, "zero.fvecs: row 1: dimension 0", [&] {
    read_vectors(write_bytes("zero.fvecs", vecs_rows(std::vector<std::vector<float>>{{}, {}})));
  });
  expect_error(ErrorKind::Input, "neg.ivecs: row 1: dimension -3", [&] {
    std::string s;
    append(s, std::int32_t{-3});
    read_vectors(write_bytes("neg.ivecs", s + "abcdefghijkl"));
  });
  expect_error(ErrorKind::Input, "huge.bvecs: row 1: dimension 1000000000 needs 1000000004 bytes a row, but the file has 8", [&] {
    std::string s;
    append(s, std::int32_t{1000000000});
    read_vectors(write_bytes("huge.bvecs", s + "abcd"));
  });
  expect_error(ErrorKind::Input, "tiny.fvecs: row 1: the file ends inside the row's dimension (3 of 4 bytes)",
               [&] { read_vectors(write_bytes("tiny.fvecs", "abc")); });
  expect_error(ErrorKind::Input, "empty.fvecs: the file is empty", [&] { read_vectors(write_bytes("empty.fvecs", "")); });
  expect_error(ErrorKind::Input, "cannot open", [&] { read_vectors(temp("absent.fvecs")); });
  // A NaN in row 2, column 3.
  expect_error(ErrorKind::Input, "nan.fvecs: row 2, column 3: nan", [&] {
    read_vectors(write_bytes("nan.fvecs", vecs_rows(std::vector<std::vector<float>>{three, {1, 2, NAN}, three})));
  });
  expect_error(ErrorKind::Input, "inf.fvecs: row 1, column 1: inf", [&] {
    read_vectors(write_bytes("inf.fvecs", vecs_rows(std::vector<std::vector<float>>{{INFINITY}})));
  });
  // .bvecs rows are d + 4 bytes: a truncation there too.
  expect_error(ErrorKind::Input, "cut.bvecs: row 2: the file ends inside the row (5 of its 7 bytes)", [&] {
    read_vectors(write_bytes("cut.bvecs", vecs_rows(std::vector<std::vector<std::uint8_t>>{{1, 2, 3}, {4, 5, 6}}).substr(0, 12)));
  });
}

TEST(VectorFiles, VecsFilesAreCataloguesUpToEightDimensions) {
  const std::string path = write_bytes("points.fvecs", vecs_rows(std::vector<std::vector<float>>{{1, 2, 3}, {4, 5, 6}}));
  const PointSet p = read_points(path);
  EXPECT_EQ(p.dim(), 3);
  EXPECT_EQ(p.coord(2)[1], 6.0);
  ReadOptions o;
  o.columns = {2};
  EXPECT_EQ(read_points(path, o).coord(0)[0], 2.0);
  // Only the chosen columns are checked finite, as in the other catalogue formats.
  const std::string nan_path = write_bytes("nan-points.fvecs", vecs_rows(std::vector<std::vector<float>>{{1, NAN}, {3, 4}}));
  ReadOptions first;
  first.columns = {1};
  EXPECT_EQ(read_points(nan_path, first).size(), 2u);
  expect_error(ErrorKind::Input, "nan-points.fvecs: row 1 has a non-finite value 'nan' in column 2",
               [&] { read_points(nan_path); });
  const std::string wide = write_bytes("wide.fvecs", vecs_rows(std::vector<std::vector<float>>{std::vector<float>(9, 1.0f)}));
  expect_error(ErrorKind::Config, "vectors of any dimension are read by read_vectors", [&] { read_points(wide); });
}

TEST(VectorFiles, TextOfManyColumnsWithAHeader) {
  const std::uint64_t seed = testing_support::fresh_seed();
  SCOPED_TRACE(fmt::format("seed {}", seed));
  RandomRows random(seed);
  const int dim = 20;
  const VectorSet v = random.f64(40, dim);
  std::string text = "# twenty columns\n";
  for (int k = 1; k <= dim; ++k) text += fmt::format("{}c{}", k > 1 ? "," : "", k);
  text += "\n";
  std::vector<double> r(dim);
  for (std::size_t i = 0; i < v.size(); ++i) {
    v.row_f64(i, r.data());
    for (int k = 0; k < dim; ++k) text += fmt::format("{}{:.17g}", k > 0 ? "," : "", r[static_cast<std::size_t>(k)]);
    text += "\n";
  }
  const std::string path = write_bytes("wide.csv", text);
  const VectorSet all = read_vectors(path);
  EXPECT_EQ(all.element(), Element::F64);
  expect_same_values(all, v);
  ReadOptions named;
  named.column_names = {"c20", "c2"};
  const VectorSet two = read_vectors(path, named);
  ASSERT_EQ(two.dim(), 2);
  double got[2];
  two.row_f64(7, got);
  v.row_f64(7, r.data());
  EXPECT_EQ(got[0], r[19]);
  EXPECT_EQ(got[1], r[1]);
  ReadOptions last_is_weight;
  last_is_weight.weight_column = 20;
  EXPECT_EQ(read_vectors(path, last_is_weight).dim(), 19);
  named.column_names = {"c21"};
  expect_error(ErrorKind::Input, "no column named 'c21'", [&] { read_vectors(path, named); });
  // Text's errors name the line (the header is line 1).
  expect_error(ErrorKind::Input, "bad.txt:4: non-finite value 'nan' in column 2",
               [&] { read_vectors(write_bytes("bad.txt", "a b c\n1 2 3\n4 5 6\n7 nan 9\n")); });
  // Written as text and read back: 17 significant digits, exact, for 128 columns too.
  const VectorSet wide = random.f64(30, 128);
  write_vectors(temp("wide.txt"), wide);
  expect_same_values(read_vectors(temp("wide.txt")), wide);
  const VectorSet floats = random.f32(30, 17);
  write_vectors(temp("floats.txt"), floats);
  expect_same_values(read_vectors(temp("floats.txt")), floats);
  const VectorSet halves = random.f16(30, 3);
  write_vectors(temp("halves.txt"), halves);
  expect_same_values(read_vectors(temp("halves.txt")), halves);
}

TEST(VectorFiles, OtherContainersAreRefusedWithTheReason) {
  expect_error(ErrorKind::Input, "a .npz archive is not read as vectors",
               [&] { read_vectors(write_bytes("a.npz", "PK\x03\x04")); });
  expect_error(ErrorKind::Input, "cannot open", [&] { read_vectors(write_bytes("x.fvecs", "abcd") + ":/train"); });
}

#ifdef TWOBODY_HAVE_HDF5

namespace {
// A 2-D dataset written with the HDF5 C API.
void write_dataset(hid_t file, const char* name, hid_t file_type, hid_t memory_type, hsize_t rows, hsize_t cols,
                   const void* data) {
  const hsize_t dims[2] = {rows, cols};
  const hid_t space = H5Screate_simple(2, dims, nullptr);
  const hid_t ds = H5Dcreate2(file, name, file_type, space, H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT);
  ASSERT_GE(ds, 0);
  EXPECT_GE(H5Dwrite(ds, memory_type, H5S_ALL, H5S_ALL, H5P_DEFAULT, data), 0);
  H5Dclose(ds);
  H5Sclose(space);
}
}  // namespace

TEST(VectorFiles, Hdf5RoundTripsAndReadsAnnBenchmarkFiles) {
  const std::uint64_t seed = testing_support::fresh_seed();
  SCOPED_TRACE(fmt::format("seed {}", seed));
  RandomRows random(seed);
  for (int dim : kDims) {
    SCOPED_TRACE(fmt::format("dim {}", dim));
    const std::size_t n = rows_for(dim);
    for (const VectorSet& v : {random.f16(n, dim), random.f32(n, dim), random.f64(n, dim)}) {
      const std::string path = temp(fmt::format("round-{}.h5", to_string(v.element())));
      write_vectors(path, v);
      for (const std::string& spec : {path, path + ":/vectors"}) {
        const VectorSet r = read_vectors(spec);
        EXPECT_EQ(r.element(), v.element());
        expect_same_values(r, v);
      }
    }
  }
  // The ANN benchmarks' layout: /train and /test float32, /neighbors int32, /distances float32.
  const std::string ann = temp("ann.hdf5");
  const VectorSet train = random.f32(500, 25), test = random.f32(10, 25);
  const std::vector<std::int32_t> neighbours = {0, 499, 7, 3, 2147483647, -1};
  const std::int64_t limit = std::int64_t{1} << 53;
  const std::vector<std::int64_t> wide = {limit, -limit, limit + 1, 0};
  {
    const hid_t f = H5Fcreate(ann.c_str(), H5F_ACC_TRUNC, H5P_DEFAULT, H5P_DEFAULT);
    write_dataset(f, "train", H5T_IEEE_F32LE, H5T_NATIVE_FLOAT, 500, 25, train.row(0));
    write_dataset(f, "test", H5T_IEEE_F32LE, H5T_NATIVE_FLOAT, 10, 25, test.row(0));
    write_dataset(f, "neighbors", H5T_STD_I32LE, H5T_NATIVE_INT32, 3, 2, neighbours.data());
    write_dataset(f, "wide", H5T_STD_I64LE, H5T_NATIVE_INT64, 2, 2, wide.data());
    H5Fclose(f);
  }
  const VectorSet t = read_vectors(ann + ":/train");
  EXPECT_EQ(t.element(), Element::F32);
  expect_same_values(t, train);
  expect_same_values(read_vectors(ann + ":test"), test);
  const VectorSet nb = read_vectors(ann + ":/neighbors");
  EXPECT_EQ(nb.element(), Element::F64);
  expect_same_values(nb, VectorSet::from_rows(std::vector<double>{0, 499, 7, 3, 2147483647, -1}, 3, 2));
  ReadOptions o;
  o.columns = {2};
  EXPECT_EQ(read_vectors(ann + ":/neighbors", o).dim(), 1);
  expect_error(ErrorKind::Input, "ann.hdf5:/wide: row 2, column 1: 9007199254740993 is beyond 2^53",
               [&] { read_vectors(ann + ":/wide"); });
  expect_error(ErrorKind::Input, "the file holds 4 datasets: name one", [&] { read_vectors(ann); });
  expect_error(ErrorKind::Input, "no such dataset or group", [&] { read_vectors(ann + ":/base"); });
}

#endif
