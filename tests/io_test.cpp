#include <gtest/gtest.h>

#include <cstdint>
#include <cstring>
#include <fstream>

#include "test_support.hpp"
#include "twobody/error.hpp"
#include "twobody/generate.hpp"
#include "twobody/io.hpp"

using namespace twobody;

namespace {
std::string temp_file(const std::string& name, const std::string& text) {
  const std::string path = ::testing::TempDir() + name;
  std::ofstream(path, std::ios::binary) << text;
  return path;
}
// Expects an Error of `kind` whose message contains `needle`.
void expect_error(ErrorKind kind, const std::string& needle, auto&& f) {
  try {
    f();
    ADD_FAILURE() << "expected an error containing '" << needle << "'";
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), kind) << e.what();
    EXPECT_NE(std::string(e.what()).find(needle), std::string::npos) << e.what();
  }
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
  expect_error(ErrorKind::Input, "no such file", [] { read_points("/nonexistent/points.txt"); });
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
