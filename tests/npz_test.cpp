// .npz outputs: the zip container parsed here (local headers, central directory, end records,
// CRC-32 recomputed bit by bit), each entry's .npy header and values compared exactly; numpy.load
// reads them too when numpy is installed.
#include <gtest/gtest.h>

#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <map>
#include <random>
#include <sstream>

#include "twobody/io.hpp"
#include "twobody/table.hpp"

using namespace twobody;

namespace {

std::string slurp(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

std::uint64_t le(const std::string& s, std::size_t at, int bytes) {
  std::uint64_t v = 0;
  for (int i = bytes - 1; i >= 0; --i) v = v << 8 | static_cast<unsigned char>(s.at(at + static_cast<std::size_t>(i)));
  return v;
}

// CRC-32 one bit at a time: independent of the writer's table.
std::uint32_t crc32_bitwise(const char* p, std::size_t n) {
  std::uint32_t c = 0xFFFFFFFFu;
  for (std::size_t i = 0; i < n; ++i) {
    c ^= static_cast<unsigned char>(p[i]);
    for (int k = 0; k < 8; ++k) c = (c >> 1) ^ (0xEDB88320u & (0u - (c & 1u)));
  }
  return ~c;
}

// The archive's entries by name, each checked against its central-directory record and CRC.
std::map<std::string, std::string> unzip(const std::string& z) {
  EXPECT_GE(z.size(), 22u);
  const std::size_t end = z.size() - 22;  // no archive comment
  EXPECT_EQ(le(z, end, 4), 0x06054b50u);
  std::uint64_t count = le(z, end + 10, 2), dir = le(z, end + 16, 4);
  if (count == 0xFFFF) {  // ZIP64: the locator before the end record points at the real one
    EXPECT_EQ(le(z, end - 20, 4), 0x07064b50u);
    const std::size_t z64 = le(z, end - 12, 8);
    EXPECT_EQ(le(z, z64, 4), 0x06064b50u);
    count = le(z, z64 + 32, 8);
    dir = le(z, z64 + 48, 8);
  }
  std::map<std::string, std::string> entries;
  std::size_t at = dir;
  for (std::uint64_t k = 0; k < count; ++k) {
    EXPECT_EQ(le(z, at, 4), 0x02014b50u);
    EXPECT_EQ(le(z, at + 10, 2), 0u);  // stored
    const std::uint32_t crc = static_cast<std::uint32_t>(le(z, at + 16, 4));
    const std::uint64_t size = le(z, at + 24, 4);
    const std::size_t name_len = le(z, at + 28, 2), extra_len = le(z, at + 30, 2), comment_len = le(z, at + 32, 2);
    const std::uint64_t local = le(z, at + 42, 4);
    const std::string name = z.substr(at + 46, name_len);
    EXPECT_EQ(le(z, local, 4), 0x04034b50u);
    EXPECT_EQ(z.substr(local + 30, le(z, local + 26, 2)), name);
    const std::size_t data = local + 30 + le(z, local + 26, 2) + le(z, local + 28, 2);
    EXPECT_EQ(crc32_bitwise(z.data() + data, size), crc) << name;
    entries[name] = z.substr(data, size);
    at += 46 + name_len + extra_len + comment_len;
  }
  return entries;
}

// A .npy entry's header text and its values.
template <class T>
std::pair<std::string, std::vector<T>> npy(const std::string& s) {
  EXPECT_EQ(s.substr(0, 8), std::string("\x93NUMPY\x01\x00", 8));
  const std::size_t hlen = le(s, 8, 2);
  EXPECT_EQ((10 + hlen) % 64, 0u);
  std::vector<T> v((s.size() - 10 - hlen) / sizeof(T));
  std::memcpy(v.data(), s.data() + 10 + hlen, v.size() * sizeof(T));
  return {s.substr(10, hlen), v};
}

bool numpy_present() { return std::system("python3 -c 'import numpy' 2>/dev/null") == 0; }

}  // namespace

TEST(NpzWriter, MatrixAndPointsArchives) {
  std::mt19937_64 rng(31);
  std::vector<double> v(7 * 9);
  for (auto& x : v) x = std::uniform_real_distribution<double>(-1, 1)(rng);
  const std::string path = ::testing::TempDir() + "m.NPZ";
  write_matrix(path, 7, 9, v);
  const auto entries = unzip(slurp(path));
  ASSERT_EQ(entries.size(), 1u);
  const auto [header, values] = npy<double>(entries.at("matrix.npy"));
  EXPECT_NE(header.find("'descr': '<f8', 'fortran_order': False, 'shape': (7, 9), }"), std::string::npos);
  EXPECT_EQ(values, v);

  PointSet p = PointSet::from_columns({{1, 2, 3}, {4, 5, 6}});
  write_points(::testing::TempDir() + "p.npz", p);
  const auto points = npy<double>(unzip(slurp(::testing::TempDir() + "p.npz")).at("points.npy"));
  EXPECT_NE(points.first.find("'shape': (3, 2)"), std::string::npos);
  EXPECT_EQ(points.second, (std::vector<double>{1, 4, 2, 5, 3, 6}));
  if (numpy_present()) {
    const std::string check = "python3 -c 'import numpy,sys; m=numpy.load(sys.argv[1])[\"matrix\"]; "
                              "assert m.shape==(7,9) and m.dtype==numpy.float64' " + path;
    EXPECT_EQ(std::system(check.c_str()), 0);
  }
}

TEST(NpzWriter, TableOneArrayPerColumn) {
  Table t;
  t.columns.push_back({"lo", std::vector<double>{0, 0.5, 1}});
  t.columns.push_back({"npairs", std::vector<std::uint64_t>{3, 18446744073709551615ull, 0}});
  const std::string path = ::testing::TempDir() + "t.npz";
  write_table_file(path, t, TableFormat::Npz);
  const auto entries = unzip(slurp(path));
  ASSERT_EQ(entries.size(), 2u);
  const auto lo = npy<double>(entries.at("lo.npy"));
  EXPECT_NE(lo.first.find("'descr': '<f8', 'fortran_order': False, 'shape': (3,), }"), std::string::npos);
  EXPECT_EQ(lo.second, (std::vector<double>{0, 0.5, 1}));
  const auto n = npy<std::uint64_t>(entries.at("npairs.npy"));
  EXPECT_NE(n.first.find("'descr': '<u8'"), std::string::npos);
  EXPECT_EQ(n.second, (std::vector<std::uint64_t>{3, 18446744073709551615ull, 0}));
  if (numpy_present()) {
    const std::string check = "python3 -c 'import numpy,sys; z=numpy.load(sys.argv[1]); "
                              "assert list(z.keys())==[\"lo\",\"npairs\"] and z[\"npairs\"][1]==2**64-1' " + path;
    EXPECT_EQ(std::system(check.c_str()), 0);
  }
}

// 65 535 entries or more need ZIP64's end records (numpy's own archives use them the same way).
TEST(NpzWriter, ManyEntriesUseZip64EndRecords) {
  Table t;
  for (int c = 0; c < 70000; ++c) t.columns.push_back({"c" + std::to_string(c), std::vector<double>{double(c)}});
  const std::string path = ::testing::TempDir() + "wide.npz";
  write_table_file(path, t, TableFormat::Npz);
  const auto entries = unzip(slurp(path));
  ASSERT_EQ(entries.size(), 70000u);
  EXPECT_EQ(npy<double>(entries.at("c69999.npy")).second, std::vector<double>{69999});
  if (numpy_present()) {
    const std::string check = "python3 -c 'import numpy,sys; z=numpy.load(sys.argv[1]); "
                              "assert len(z.files)==70000 and z[\"c12345\"][0]==12345' " + path;
    EXPECT_EQ(std::system(check.c_str()), 0);
  }
}
