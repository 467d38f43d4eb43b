// HDF5 catalogues and outputs: fixtures written here with libhdf5's C API, read back through
// read_catalogue and compared exactly; hostile files end in an Error(Input) that names the file,
// the object and the problem.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <random>

#include <nlohmann/json.hpp>

#include "test_support.hpp"
#include "twobody/error.hpp"
#include "twobody/io.hpp"
#include "twobody/table.hpp"

using namespace twobody;

using testing_support::expect_error;

#ifndef TWOBODY_HAVE_HDF5

TEST(Hdf5, RefusedWithTheReasonWhenNotBuilt) {
  const std::string path = ::testing::TempDir() + "absent.h5";
  std::ofstream(path) << "1 2 3\n";
  expect_error(ErrorKind::Config, "built without HDF5 support", [&] { read_points(path); });
  GTEST_SKIP() << "twobody was built without HDF5: the HDF5 tests do not run";
}

#else

#include <hdf5.h>

namespace {

std::string temp(const std::string& name) { return ::testing::TempDir() + name; }

// A file created for writing fixtures, closed at the end of the scope.
class Fixture {
 public:
  explicit Fixture(const std::string& path) : id_(H5Fcreate(path.c_str(), H5F_ACC_TRUNC, H5P_DEFAULT, H5P_DEFAULT)) {
    EXPECT_GE(id_, 0);
  }
  ~Fixture() { H5Fclose(id_); }
  hid_t id() const { return id_; }

  // A dataset of `dims` in `file_type`, written from `data` in `memory_type` (nullptr: unwritten).
  void dataset(const std::string& name, hid_t file_type, hid_t memory_type, std::vector<hsize_t> dims,
               const void* data, hid_t where = -1, hid_t dcpl = H5P_DEFAULT) {
    const hid_t space = H5Screate_simple(static_cast<int>(dims.size()), dims.data(), nullptr);
    const hid_t ds = H5Dcreate2(where < 0 ? id_ : where, name.c_str(), file_type, space, H5P_DEFAULT, dcpl, H5P_DEFAULT);
    ASSERT_GE(ds, 0) << name;
    if (data) {
      ASSERT_GE(H5Dwrite(ds, memory_type, H5S_ALL, H5S_ALL, H5P_DEFAULT, data), 0);
    }
    H5Dclose(ds);
    H5Sclose(space);
  }

 private:
  hid_t id_;
};

std::vector<double> random_doubles(std::size_t n, std::uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<double> u(-1e3, 1e3);
  std::vector<double> v(n);
  for (auto& x : v) x = u(rng);
  return v;
}

}  // namespace

TEST(Hdf5Reader, TwoDimensionalFloat64ReadsExactly) {
  const std::string path = temp("rows.h5");
  const std::size_t rows = 3001, cols = 4;  // more rows than one read block of a column pass
  const std::vector<double> v = random_doubles(rows * cols, 11);
  {
    Fixture f(path);
    f.dataset("points", H5T_IEEE_F64LE, H5T_NATIVE_DOUBLE, {rows, cols}, v.data());
  }
  ReadOptions o;
  o.weight_column = 4;
  for (const std::string& spec : {path, path + ":/points", path + ":points"}) {
    const Catalogue c = read_catalogue(spec, o);
    ASSERT_EQ(c.points.size(), rows);
    ASSERT_EQ(c.points.dim(), 3);
    for (std::size_t i = 0; i < rows; ++i) {
      for (int d = 0; d < 3; ++d) ASSERT_EQ(c.points.coord(d)[i], v[i * cols + static_cast<std::size_t>(d)]);
      ASSERT_EQ(c.points.weights()[i], v[i * cols + 3]);
    }
  }
  EXPECT_EQ(format_of(path + ":/points"), FileFormat::Hdf5);
  EXPECT_EQ(format_of("CAT.HDF5"), FileFormat::Hdf5);
  EXPECT_EQ(file_of(path + ":/points"), path);
}

TEST(Hdf5Reader, Float32AndIntegerTypesConvertExactly) {
  const std::string path = temp("types.h5");
  const std::vector<float> f32 = {1.5f, -2.25f, 3.0e-7f, 1.0e30f, -0.0f, 7.0f};
  const std::vector<std::int16_t> i16 = {-32768, 32767, 0, 5, -7, 12};
  const std::vector<std::uint64_t> u64 = {0, 1, 9007199254740992ull, 42, 7, 3};
  const std::vector<std::int8_t> i8 = {-128, 127, 0, 1, 2, 3};
  {
    Fixture f(path);
    f.dataset("f32", H5T_IEEE_F32BE, H5T_NATIVE_FLOAT, {3, 2}, f32.data());  // big-endian in the file
    f.dataset("i16", H5T_STD_I16LE, H5T_NATIVE_INT16, {6}, i16.data());
    f.dataset("u64", H5T_STD_U64BE, H5T_NATIVE_UINT64, {6}, u64.data());
    f.dataset("i8", H5T_STD_I8LE, H5T_NATIVE_INT8, {6, 1}, i8.data());
  }
  const PointSet a = read_points(path + ":/f32");
  ASSERT_EQ(a.size(), 3u);
  ASSERT_EQ(a.dim(), 2);
  for (std::size_t i = 0; i < 3; ++i)
    for (int d = 0; d < 2; ++d) EXPECT_EQ(a.coord(d)[i], static_cast<double>(f32[i * 2 + static_cast<std::size_t>(d)]));
  const PointSet b = read_points(path + ":/i16");
  const PointSet c = read_points(path + ":/u64");
  const PointSet d = read_points(path + ":/i8");
  for (std::size_t i = 0; i < 6; ++i) {
    EXPECT_EQ(b.coord(0)[i], static_cast<double>(i16[i]));
    EXPECT_EQ(c.coord(0)[i], static_cast<double>(u64[i]));
    EXPECT_EQ(d.coord(0)[i], static_cast<double>(i8[i]));
  }
}

TEST(Hdf5Reader, CompoundTableColumnsByName) {
  struct Row {
    double x;
    float y;
    std::int32_t z;
    char name[8];
    std::uint16_t id;
  };
  std::vector<Row> rows(50);
  const std::vector<double> v = random_doubles(100, 12);
  for (std::size_t i = 0; i < rows.size(); ++i)
    rows[i] = {v[i], static_cast<float>(v[50 + i]), static_cast<std::int32_t>(i) - 20, "gal", static_cast<std::uint16_t>(i * 3)};
  const std::string path = temp("table.h5");
  {
    Fixture f(path);
    const hid_t text = H5Tcopy(H5T_C_S1);
    H5Tset_size(text, 8);
    const hid_t t = H5Tcreate(H5T_COMPOUND, sizeof(Row));
    H5Tinsert(t, "x", HOFFSET(Row, x), H5T_NATIVE_DOUBLE);
    H5Tinsert(t, "y", HOFFSET(Row, y), H5T_NATIVE_FLOAT);
    H5Tinsert(t, "z", HOFFSET(Row, z), H5T_NATIVE_INT32);
    H5Tinsert(t, "name", HOFFSET(Row, name), text);
    H5Tinsert(t, "id", HOFFSET(Row, id), H5T_NATIVE_UINT16);
    f.dataset("table", t, t, {rows.size()}, rows.data());
    H5Tclose(t);
    H5Tclose(text);
  }
  ReadOptions o;
  o.column_names = {"z", "x", "y"};
  const Catalogue c = read_catalogue(path + ":/table", o);
  EXPECT_EQ(c.names, (std::vector<std::string>{"x", "y", "z", "id"}));
  for (std::size_t i = 0; i < rows.size(); ++i) {
    ASSERT_EQ(c.points.coord(0)[i], rows[i].z);
    ASSERT_EQ(c.points.coord(1)[i], rows[i].x);
    ASSERT_EQ(c.points.coord(2)[i], static_cast<double>(rows[i].y));
  }
  // By default the first three numeric fields; the rest said unused.
  ReadOptions byDefault;
  byDefault.default_columns = 3;
  const Catalogue d = read_catalogue(path, byDefault);
  EXPECT_EQ(d.points.coord(0)[7], rows[7].x);
  EXPECT_EQ(d.unused_columns, std::vector<int>{4});
  o.column_names = {"x", "name"};
  expect_error(ErrorKind::Input, "column name (strings) is not numeric", [&] { read_catalogue(path, o); });
  o.column_names = {"x", "w"};
  expect_error(ErrorKind::Input, "no column named 'w' (the file has: x, y, z, id)", [&] { read_catalogue(path, o); });
}

TEST(Hdf5Reader, GroupOfColumnDatasets) {
  const std::string path = temp("group.h5");
  const std::vector<double> ra = random_doubles(40, 13), dec = random_doubles(40, 14);
  const std::vector<std::int32_t> z(40, 7);
  {
    Fixture f(path);
    const hid_t gcpl = H5Pcreate(H5P_GROUP_CREATE);
    H5Pset_link_creation_order(gcpl, H5P_CRT_ORDER_TRACKED | H5P_CRT_ORDER_INDEXED);
    const hid_t ordered = H5Gcreate2(f.id(), "ordered", H5P_DEFAULT, gcpl, H5P_DEFAULT);
    const hid_t plain = H5Gcreate2(f.id(), "plain", H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT);
    for (hid_t g : {ordered, plain}) {
      f.dataset("RA", H5T_IEEE_F64LE, H5T_NATIVE_DOUBLE, {40}, ra.data(), g);
      f.dataset("DEC", H5T_IEEE_F64LE, H5T_NATIVE_DOUBLE, {40}, dec.data(), g);
      f.dataset("Z", H5T_STD_I32LE, H5T_NATIVE_INT32, {40}, z.data(), g);
      f.dataset("cov", H5T_IEEE_F64LE, H5T_NATIVE_DOUBLE, {2, 2}, ra.data(), g);  // not a column: skipped
    }
    const hid_t mixed = H5Gcreate2(f.id(), "mixed", H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT);
    f.dataset("a", H5T_IEEE_F64LE, H5T_NATIVE_DOUBLE, {40}, ra.data(), mixed);
    f.dataset("b", H5T_IEEE_F64LE, H5T_NATIVE_DOUBLE, {39}, ra.data(), mixed);
    H5Gclose(mixed);
    H5Gclose(ordered);
    H5Gclose(plain);
    H5Pclose(gcpl);
  }
  const Catalogue ordered = read_catalogue(path + ":/ordered");
  EXPECT_EQ(ordered.names, (std::vector<std::string>{"RA", "DEC", "Z"}));
  const Catalogue plain = read_catalogue(path + ":/plain");
  EXPECT_EQ(plain.names, (std::vector<std::string>{"DEC", "RA", "Z"}));
  ReadOptions o;
  o.column_names = {"RA", "DEC"};
  const Catalogue c = read_catalogue(path + ":/plain", o);
  for (std::size_t i = 0; i < 40; ++i) {
    ASSERT_EQ(c.points.coord(0)[i], ra[i]);
    ASSERT_EQ(c.points.coord(1)[i], dec[i]);
    ASSERT_EQ(ordered.points.coord(2)[i], 7.0);
  }
  o.column_names = {"RA", "cov"};
  expect_error(ErrorKind::Input, "column cov (a 2-D dataset) is not numeric", [&] { read_catalogue(path + ":/plain", o); });
  expect_error(ErrorKind::Input, "differ in length", [&] { read_catalogue(path + ":/mixed"); });
}

TEST(Hdf5Reader, BadFilesAndPathsSayWhat) {
  const std::string path = temp("bad.h5");
  const std::vector<double> v = random_doubles(24, 15);
  {
    Fixture f(path);
    f.dataset("cube", H5T_IEEE_F64LE, H5T_NATIVE_DOUBLE, {2, 3, 4}, v.data());
    f.dataset("empty", H5T_IEEE_F64LE, H5T_NATIVE_DOUBLE, {0, 3}, nullptr);
    const hid_t text = H5Tcopy(H5T_C_S1);
    H5Tset_size(text, 4);
    f.dataset("names", text, text, {2}, "abcdefgh");
    H5Tclose(text);
    std::vector<double> nan = v;
    nan[7] = std::nan("");
    f.dataset("nan", H5T_IEEE_F64LE, H5T_NATIVE_DOUBLE, {8, 3}, nan.data());
    const hid_t scalar = H5Screate(H5S_SCALAR);
    const hid_t ds = H5Dcreate2(f.id(), "one", H5T_IEEE_F64LE, scalar, H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT);
    H5Dwrite(ds, H5T_NATIVE_DOUBLE, H5S_ALL, H5S_ALL, H5P_DEFAULT, v.data());
    H5Dclose(ds);
    H5Sclose(scalar);
    // Chunked and never written: the header claims 3000 values the file does not hold.
    const hid_t dcpl = H5Pcreate(H5P_DATASET_CREATE);
    const hsize_t chunk[2] = {100, 3};
    H5Pset_chunk(dcpl, 2, chunk);
    f.dataset("unwritten", H5T_IEEE_F64LE, H5T_NATIVE_DOUBLE, {1000, 3}, nullptr, -1, dcpl);
    H5Pclose(dcpl);
  }
  expect_error(ErrorKind::Input, "holds 6 datasets: name one as", [&] { read_points(path); });
  expect_error(ErrorKind::Input, ":/nope: no such dataset or group (the file's datasets: /cube, /empty", [&] {
    read_points(path + ":/nope");
  });
  expect_error(ErrorKind::Input, ":/cube: a 3-D dataset (2 x 3 x 4)", [&] { read_points(path + ":/cube"); });
  expect_error(ErrorKind::Input, ":/empty: the dataset is empty", [&] { read_points(path + ":/empty"); });
  expect_error(ErrorKind::Input, ":/names: the dataset holds strings, not numbers", [&] { read_points(path + ":/names"); });
  expect_error(ErrorKind::Input, "row 3 has a non-finite value 'nan' in column 2", [&] { read_points(path + ":/nan"); });
  expect_error(ErrorKind::Input, ":/one: the dataset holds one value (a scalar)", [&] { read_points(path + ":/one"); });
  expect_error(ErrorKind::Input, ":/unwritten: the dataset claims 3000 values but the file stores 0 bytes", [&] {
    read_points(path + ":/unwritten");
  });
  // A 12-bit integer: a legal HDF5 type, but not one libhdf5 converts safely from a hostile file.
  const std::string odd = temp("odd.h5");
  {
    Fixture f(odd);
    const hid_t twelve = H5Tcopy(H5T_STD_I16LE);
    H5Tset_precision(twelve, 12);
    const std::vector<std::int16_t> small = {1, 2, 3};
    f.dataset("bits", twelve, H5T_NATIVE_INT16, {3}, small.data());
    H5Tclose(twelve);
  }
  expect_error(ErrorKind::Input, "odd.h5:/bits: the dataset holds integers of an unusual layout (2 bytes", [&] {
    read_points(odd);
  });
  // Not HDF5 at all, cut short, empty, missing.
  const std::string text = temp("text.h5");
  std::ofstream(text) << "1 2 3\n4 5 6\n";
  expect_error(ErrorKind::Input, "text.h5: not an HDF5 file", [&] { read_points(text); });
  const std::string cut = temp("cut.h5");
  std::filesystem::copy_file(path, cut, std::filesystem::copy_options::overwrite_existing);
  std::filesystem::resize_file(cut, std::filesystem::file_size(cut) / 3);
  expect_error(ErrorKind::Input, "cut.h5", [&] { read_points(cut + ":/nan"); });
  const std::string empty = temp("empty.h5");
  std::ofstream{empty};
  expect_error(ErrorKind::Input, "empty.h5: the file is empty", [&] { read_points(empty); });
  expect_error(ErrorKind::Input, "missing.h5: cannot open: No such file or directory", [&] {
    read_points(temp("missing.h5") + ":/x");
  });
  const std::string none = temp("none.h5");
  { Fixture f(none); }
  expect_error(ErrorKind::Input, "none.h5: the file holds no datasets", [&] { read_points(none); });
}

TEST(Hdf5Writer, PointsMatrixAndTableReadBack) {
  const std::string dir = temp("h5out/");
  std::filesystem::remove_all(dir);
  std::filesystem::create_directories(dir);
  const std::vector<double> v = random_doubles(300, 16);
  PointSet p = PointSet::from_columns({std::vector<double>(v.begin(), v.begin() + 100),
                                       std::vector<double>(v.begin() + 100, v.begin() + 200)});
  p.set_weights(std::vector<double>(v.begin() + 200, v.end()));
  write_points(dir + "p.h5", p);
  ReadOptions o;
  o.weight_column = 3;
  const PointSet q = read_points(dir + "p.h5:/points", o);
  ASSERT_EQ(q.size(), 100u);
  for (std::size_t i = 0; i < 100; ++i) {
    ASSERT_EQ(q.coord(0)[i], p.coord(0)[i]);
    ASSERT_EQ(q.coord(1)[i], p.coord(1)[i]);
    ASSERT_EQ(q.weights()[i], p.weights()[i]);
  }
  write_matrix(dir + "m.H5", 12, 5, std::span<const double>(v).first(60));
  const PointSet m = read_points(dir + "m.H5:/matrix");
  ASSERT_EQ(m.size(), 12u);
  ASSERT_EQ(m.dim(), 5);
  for (std::size_t i = 0; i < 12; ++i)
    for (int j = 0; j < 5; ++j) ASSERT_EQ(m.coord(j)[i], v[i * 5 + static_cast<std::size_t>(j)]);

  Table t;
  t.columns.push_back({"lo", std::vector<double>{0, 1, 2}});
  t.columns.push_back({"npairs", std::vector<std::uint64_t>{5, 18446744073709551615ull, 0}});
  t.meta = {{"backend", "cpu"}, {"n_points", 3}};
  write_table_file(dir + "t.h5", t, TableFormat::Hdf5);
  const Catalogue c = read_catalogue(dir + "t.h5:/table");
  EXPECT_EQ(c.names, (std::vector<std::string>{"lo", "npairs"}));
  EXPECT_EQ(c.points.coord(0)[2], 2.0);
  EXPECT_EQ(c.points.coord(1)[0], 5.0);
  // The exact uint64 and the metadata, through the C API.
  const hid_t f = H5Fopen((dir + "t.h5").c_str(), H5F_ACC_RDONLY, H5P_DEFAULT);
  const hid_t ds = H5Dopen2(f, "table", H5P_DEFAULT);
  const hid_t one = H5Tcreate(H5T_COMPOUND, 8);
  H5Tinsert(one, "npairs", 0, H5T_NATIVE_UINT64);
  std::uint64_t counts[3] = {};
  ASSERT_GE(H5Dread(ds, one, H5S_ALL, H5S_ALL, H5P_DEFAULT, counts), 0);
  EXPECT_EQ(counts[1], 18446744073709551615ull);
  const hid_t attr = H5Aopen(ds, "meta", H5P_DEFAULT);
  const hid_t type = H5Aget_type(attr);
  std::string meta(H5Tget_size(type), '\0');
  H5Aread(attr, type, meta.data());
  EXPECT_EQ(nlohmann::json::parse(meta)["backend"], "cpu");
  H5Tclose(type);
  H5Aclose(attr);
  H5Tclose(one);
  H5Dclose(ds);
  H5Fclose(f);
  // Whole or nothing: nothing but the outputs in the folder; a missing folder is an Error(Output).
  std::vector<std::string> names;
  for (const auto& e : std::filesystem::directory_iterator(dir)) names.push_back(e.path().filename().string());
  std::sort(names.begin(), names.end());
  EXPECT_EQ(names, (std::vector<std::string>{"m.H5", "p.h5", "t.h5"}));
  expect_error(ErrorKind::Output, "nodir/m.h5: cannot create the output: No such file or directory", [&] {
    write_matrix(dir + "nodir/m.h5", 1, 1, std::span<const double>(v).first(1));
  });
}

#endif
