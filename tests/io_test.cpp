#include <fmt/format.h>
#include <gtest/gtest.h>

#include <cstdint>
#include <cstring>
#include <cmath>
#include <filesystem>
#include <fstream>

#include "test_support.hpp"
#include "twobody/error.hpp"
#include "twobody/generate.hpp"
#include "twobody/io.hpp"

using namespace twobody;
using testing_support::expect_error;

namespace {
std::string temp_file(const std::string& name, const std::string& text) {
  const std::string path = ::testing::TempDir() + name;
  std::ofstream(path, std::ios::binary) << text;
  return path;
}
}  // namespace

TEST(TextReader, WhitespaceCommasCommentsAndColumns) {
  const auto path = temp_file("pts.txt", "# x y z w\n1 2 3 0.5\n\n4,5,6,1.5  # trailing\n+7\t8\t9\t2.5\n");
  const auto p = read_points(path);
  ASSERT_EQ(p.size(), 3u);
  ASSERT_EQ(p.dim(), 4);
  EXPECT_EQ(p.coord(2)[2], 9.0);
  ReadOptions o;
  o.columns = {3, 1};
  o.weight_column = 4;
  const auto q = read_points(path, o);
  EXPECT_EQ(q.dim(), 2);
  EXPECT_EQ(q.coord(0)[1], 6.0);
  EXPECT_EQ(q.coord(1)[1], 4.0);
  EXPECT_EQ(q.weights()[2], 2.5);
}

TEST(TextReader, BadInputsNameTheFileAndLine) {
  expect_error(ErrorKind::Input, "nan.txt:3", [] { read_points(temp_file("nan.txt", "1 2 3\n4 5 6\n7 nan 9\n")); });
  expect_error(ErrorKind::Input, "inf.txt:2", [] { read_points(temp_file("inf.txt", "1 2 3\n4 inf 6\n")); });
  expect_error(ErrorKind::Input, "cols.txt:4: 2 columns", [] { read_points(temp_file("cols.txt", "1 2 3\n4 5 6\n\n7 8\n")); });
  expect_error(ErrorKind::Input, "'abc' is not a number", [] { read_points(temp_file("word.txt", "1 abc 3\n")); });
  expect_error(ErrorKind::Input, "empty", [] { read_points(temp_file("empty.txt", "")); });
  expect_error(ErrorKind::Input, "no data lines", [] { read_points(temp_file("comments.txt", "# only\n\n")); });
  expect_error(ErrorKind::Input, "cannot open: No such file or directory", [] { read_points("/nonexistent/points.txt"); });
  expect_error(ErrorKind::Input, "column 5", [] {
    ReadOptions o;
    o.columns = {1, 5};
    read_points(temp_file("few.txt", "1 2 3\n"), o);
  });
  expect_error(ErrorKind::Config, "column list", [] { parse_column_list("1,x"); });
  expect_error(ErrorKind::Config, "column list", [] { parse_column_list("0"); });
}

TEST(NpyReader, RoundTripsThroughTheWriter) {
  std::mt19937_64 rng(testing_support::fresh_seed());
  auto p = testing_support::to_pointset(testing_support::uniform_points(257, 3, -5, 5, rng, true));
  const std::string path = ::testing::TempDir() + "round.npy";
  write_points(path, p);
  ReadOptions o;
  o.weight_column = 4;
  const auto q = read_points(path, o);
  ASSERT_EQ(q.size(), p.size());
  for (int d = 0; d < 3; ++d)
    for (std::size_t i = 0; i < p.size(); ++i) ASSERT_EQ(q.coord(d)[i], p.coord(d)[i]);
  for (std::size_t i = 0; i < p.size(); ++i) ASSERT_EQ(q.weights()[i], p.weights()[i]);
  // Text round trip is exact too (17 significant digits).
  const std::string tpath = ::testing::TempDir() + "round.txt";
  write_points(tpath, p);
  const auto t = read_points(tpath, o);
  for (std::size_t i = 0; i < p.size(); ++i) ASSERT_EQ(t.coord(1)[i], p.coord(1)[i]);
}

TEST(NpyReader, RejectsBadFiles) {
  expect_error(ErrorKind::Input, "bad magic", [] { read_points(temp_file("bad.npy", "hello world, not numpy")); });
  std::string trunc = std::string("\x93NUMPY\x01\x00", 8) + std::string("\x46\x00", 2);
  std::string header = "{'descr': '<f8', 'fortran_order': False, 'shape': (10, 3), }";
  header.resize(0x46 - 1, ' ');
  header += '\n';
  expect_error(ErrorKind::Input, "shorter", [&] { read_points(temp_file("short.npy", trunc + header + "abc")); });
  PointSet nanset(2, 3);
  nanset.coord(0)[1] = NAN;
  const std::string path = ::testing::TempDir() + "nan.npy";
  write_points(path, nanset);
  expect_error(ErrorKind::Input, "row 2", [&] { read_points(path); });
}

namespace {
// A version-1 .npy of `values` (float64, little-endian) under the given header dict.
std::string npy_with_header(std::string header, const std::vector<double>& values) {
  const std::size_t total = (10 + header.size() + 1 + 63) / 64 * 64;
  header.resize(total - 10 - 1, ' ');
  header += '\n';
  std::string s = std::string("\x93NUMPY\x01\x00", 8);
  const auto len = static_cast<std::uint16_t>(header.size());
  s.append(reinterpret_cast<const char*>(&len), 2);
  s += header;
  s.append(reinterpret_cast<const char*>(values.data()), values.size() * sizeof(double));
  return s;
}
}  // namespace

// The header dict as NumPy and other writers spell it: spacing, key order, 1-D shapes, Fortran
// order; shapes of other ranks refused.
TEST(NpyReader, HeaderVariants) {
  const std::vector<double> v = {1.5, -2.25, 3.125, 4.0, 5.5, -6.75};
  ReadOptions xy;
  xy.columns = {1, 2};
  auto p = read_points(temp_file("c.npy", npy_with_header("{'descr': '<f8', 'fortran_order': False, 'shape': (3, 2), }", v)), xy);
  EXPECT_EQ(p.coord(0)[1], 3.125);
  EXPECT_EQ(p.coord(1)[1], 4.0);
  p = read_points(temp_file("f.npy", npy_with_header("{'shape':( 3 , 2 ),'fortran_order':True,'descr':'<f8'}", v)), xy);
  EXPECT_EQ(p.coord(0)[1], -2.25);  // column-major: the first column is 1.5, -2.25, 3.125
  EXPECT_EQ(p.coord(1)[1], 5.5);
  ReadOptions one;
  one.columns = {1};
  p = read_points(temp_file("v.npy", npy_with_header("{'descr': '<f8', 'fortran_order': False, 'shape': (6,), }", v)), one);
  ASSERT_EQ(p.size(), 6u);
  EXPECT_EQ(p.coord(0)[5], -6.75);
  for (const char* shape : {"(1, 2, 3)", "()", "(3,,2)", "(-3, 2)", "[3, 2]"})
    expect_error(ErrorKind::Input, "1-D or 2-D", [&] {
      read_points(temp_file("s.npy", npy_with_header(fmt::format("{{'descr': '<f8', 'fortran_order': False, 'shape': {}, }}", shape), v)));
    });
  expect_error(ErrorKind::Input, "no 'descr'", [&] {
    read_points(temp_file("d.npy", npy_with_header("{'fortran_order': False, 'shape': (3, 2), }", v)));
  });
  expect_error(ErrorKind::Input, "structured dtype", [&] {
    read_points(temp_file("t.npy", npy_with_header("{'descr': '<f8x', 'fortran_order': False, 'shape': (3, 2), }", v)));
  });
}

namespace {
void append_record(std::string& s, const void* data, std::uint32_t bytes) {
  s.append(reinterpret_cast<const char*>(&bytes), 4);
  s.append(static_cast<const char*>(data), bytes);
  s.append(reinterpret_cast<const char*>(&bytes), 4);
}
}  // namespace

TEST(FastFoodReader, ReadsFloatAndDoubleColumns) {
  const std::int32_t idat[5] = {0, 3, 0, 0, 0};
  const float fdat[9] = {};
  const float znow = 0;
  const double ra[3] = {10.5, 20.25, 30.125};
  const float dec[3] = {-5.5f, 0.0f, 45.25f};
  std::string s;
  append_record(s, idat, sizeof idat);
  append_record(s, fdat, sizeof fdat);
  append_record(s, &znow, sizeof znow);
  append_record(s, ra, sizeof ra);
  append_record(s, dec, sizeof dec);
  const auto p = read_points(temp_file("tiny.ff", s));
  ASSERT_EQ(p.dim(), 2);
  EXPECT_EQ(p.coord(0)[2], 30.125);
  EXPECT_EQ(p.coord(1)[2], 45.25);
  expect_error(ErrorKind::Input, "corrupt", [&] {
    std::string bad = s;
    bad[bad.size() - 1] ^= 1;
    read_points(temp_file("bad.ff", bad));
  });
  expect_error(ErrorKind::Input, "first record", [&] { read_points(temp_file("notff.ff", std::string("\x04\0\0\0abcd\x04\0\0\0", 12))); });
}

TEST(FastFoodReader, ReadsTheSharedMock) {
  const std::string path = std::string(TWOBODY_SHARED_DATA) + "/Mr19_mock_northonly.rdcz.ff";
  if (!std::ifstream(path)) GTEST_SKIP() << "shared mock not present";
  ReadOptions o;
  o.columns = {1, 2, 3};
  const auto p = read_points(path, o);
  EXPECT_EQ(p.size(), 84383u);
  for (std::size_t i = 0; i < p.size(); ++i) {
    ASSERT_GE(p.coord(0)[i], 0.0);
    ASSERT_LE(p.coord(0)[i], 360.0);
    ASSERT_LE(std::abs(p.coord(1)[i]), 90.0);
  }
}

TEST(TextReader, HeaderNamesSelectColumnsAndDefaultColumnsReportTheRest) {
  const auto path = temp_file("named.txt", "\xEF\xBB\xBFx,y,z,mass\n1,2,3,10\n4,5,6,20\n");
  const Catalogue all = read_catalogue(path);
  EXPECT_EQ(all.names, (std::vector<std::string>{"x", "y", "z", "mass"}));
  EXPECT_EQ(all.points.dim(), 4);
  ReadOptions o;
  o.column_names = {"mass", "x"};
  const PointSet p = read_points(path, o);
  ASSERT_EQ(p.dim(), 2);
  EXPECT_EQ(p.coord(0)[1], 20.0);
  EXPECT_EQ(p.coord(1)[1], 4.0);
  ReadOptions d;
  d.default_columns = 3;
  const Catalogue three = read_catalogue(path, d);
  EXPECT_EQ(three.points.dim(), 3);
  EXPECT_EQ(three.unused_columns, std::vector<int>{4});
  d.weight_column = 1;
  d.value_columns = {3};
  const Catalogue rest = read_catalogue(path, d);
  ASSERT_EQ(rest.points.dim(), 2);  // columns 2 and 4: the weight and value columns are not coordinates
  EXPECT_EQ(rest.points.coord(1)[0], 10.0);
  ASSERT_EQ(rest.values.size(), 1u);
  EXPECT_EQ(rest.values[0], (std::vector<double>{3.0, 6.0}));
  EXPECT_TRUE(rest.unused_columns.empty());
  o.column_names = {"x", "radius"};
  expect_error(ErrorKind::Input, "no column named 'radius' (the header has: x, y, z, mass)", [&] { read_points(path, o); });
  const auto plain = temp_file("plain.txt", "1 2 3\n");
  o.column_names = {"x"};
  expect_error(ErrorKind::Input, "has no header line of names", [&] { read_points(plain, o); });
}

TEST(TextReader, EmptyFieldsOverflowAndControlBytesAreErrorsAtTheirColumn) {
  expect_error(ErrorKind::Input, "e.txt:2: column 2 is empty", [] { read_points(temp_file("e.txt", "1,2,3\n4,,6\n")); });
  expect_error(ErrorKind::Input, "l.txt:1: column 1 is empty", [] { read_points(temp_file("l.txt", ",2,3\n")); });
  expect_error(ErrorKind::Input, "t.txt:1: column 3 is empty", [] { read_points(temp_file("t.txt", "1;2;\n")); });
  expect_error(ErrorKind::Input, "o.txt:2: column 3: '-1e400' is beyond float64's range",
               [] { read_points(temp_file("o.txt", "1 2 3\n4 5 -1e400\n")); });
  expect_error(ErrorKind::Input, "z.txt:1: column 2: a NUL byte",
               [] { read_points(temp_file("z.txt", std::string("1 \0 3\n", 6))); });
  expect_error(ErrorKind::Input, "UTF-16", [] { read_points(temp_file("u.txt", "\xFF\xFE" "1\0 \0")); });
  // Underflow is zero of its sign, as strtod gives; blanks around a comma are one separator.
  const PointSet p = read_points(temp_file("u.txt", "1e-400 , -1e-999 ,2\n"));
  ASSERT_EQ(p.dim(), 3);
  EXPECT_EQ(p.coord(0)[0], 0.0);
  EXPECT_TRUE(std::signbit(p.coord(1)[0]));
}

TEST(Writers, OutputsAreWholeOrNotAtAll) {
  const std::string dir = ::testing::TempDir() + "writers/";
  std::filesystem::remove_all(dir);
  std::filesystem::create_directories(dir);
  const std::string path = dir + "out.txt";
  std::ofstream(path) << "good";
  // A failure while writing leaves the earlier file and nothing beside it.
  EXPECT_THROW(write_output(path, [](std::ostream& out) {
                 out << "partial";
                 throw_input("stopped");
               }),
               Error);
  std::ifstream in(path);
  std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  EXPECT_EQ(text, "good");
  EXPECT_EQ(std::distance(std::filesystem::directory_iterator(dir), std::filesystem::directory_iterator()), 1);
  // A complete one replaces it; points and matrices read back exactly.
  const PointSet p = generate_uniform_box(100, 3, 1.0, 5);
  write_points(path, p);
  const PointSet q = read_points(path);
  ASSERT_EQ(q.size(), p.size());
  for (int d = 0; d < 3; ++d)
    for (std::size_t i = 0; i < p.size(); ++i) ASSERT_EQ(q.coord(d)[i], p.coord(d)[i]);
  write_points(dir + "p.NPY", p);
  EXPECT_EQ(read_points(dir + "p.NPY").coord(2)[7], p.coord(2)[7]);
  expect_error(ErrorKind::Output, "cannot create the output: No such file or directory",
               [&] { write_points(dir + "missing/p.txt", p); });
  expect_error(ErrorKind::Output, "is a directory", [&] { write_points(dir, p); });
  if (std::filesystem::exists("/dev/full"))
    expect_error(ErrorKind::Output, "/dev/full: write failed: No space left on device",
                 [&] { write_points("/dev/full", p); });
}
