// FITS catalogues: tables and images written here with cfitsio, read back through read_catalogue
// and compared exactly; hostile files end in an Error(Input) naming the file, the HDU and why.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <random>

#include "test_support.hpp"
#include "twobody/error.hpp"
#include "twobody/io.hpp"

using namespace twobody;

using testing_support::expect_error;

#ifndef TWOBODY_HAVE_FITS

TEST(Fits, RefusedWithTheReasonWhenNotBuilt) {
  const std::string path = ::testing::TempDir() + "absent.fits";
  std::ofstream(path) << "1 2 3\n";
  expect_error(ErrorKind::Config, "built without FITS support", [&] { read_points(path); });
  GTEST_SKIP() << "twobody was built without cfitsio: the FITS tests do not run";
}

#else

#include <fitsio.h>

namespace {

std::string temp(const std::string& name) { return ::testing::TempDir() + name; }

std::vector<double> random_doubles(std::size_t n, std::uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<double> u(-90, 360);
  std::vector<double> v(n);
  for (auto& x : v) x = u(rng);
  return v;
}

// A FITS file created for fixtures (an empty primary HDU first), closed at the end of the scope.
class Fixture {
 public:
  explicit Fixture(const std::string& path) {
    std::filesystem::remove(path);
    fits_create_file(&f_, path.c_str(), &status_);
    EXPECT_EQ(status_, 0) << path;
  }
  ~Fixture() { fits_close_file(f_, &status_); }
  fitsfile* get() { return f_; }
  int& status() { return status_; }

  // A binary table of `rows` rows; columns NAME:TFORM.
  void table(const char* extname, long rows, std::vector<std::pair<const char*, const char*>> columns) {
    std::vector<char*> names, forms;
    for (auto& [n, f] : columns) {
      names.push_back(const_cast<char*>(n));
      forms.push_back(const_cast<char*>(f));
    }
    fits_create_tbl(f_, BINARY_TBL, rows, static_cast<int>(columns.size()), names.data(), forms.data(), nullptr,
                    extname, &status_);
    ASSERT_EQ(status_, 0);
  }
  template <class T>
  void column(int type, int col, std::vector<T> values) {
    fits_write_col(f_, type, col, 1, 1, static_cast<LONGLONG>(values.size()), values.data(), &status_);
    ASSERT_EQ(status_, 0);
  }

 private:
  fitsfile* f_ = nullptr;
  int status_ = 0;
};

// A galaxy table in HDU 1 (EXTNAME GALAXIES): RA, DEC, Z doubles, then float, integer, string and
// vector columns.
struct Galaxies {
  std::vector<double> ra, dec, z;
  std::vector<float> mag;
  std::vector<std::int16_t> flag;
  std::vector<std::int64_t> id;
};

Galaxies write_galaxies(const std::string& path, long rows) {
  Galaxies g{random_doubles(rows, 21), random_doubles(rows, 22), random_doubles(rows, 23), {}, {}, {}};
  for (long i = 0; i < rows; ++i) {
    g.mag.push_back(static_cast<float>(g.z[i] / 7));
    g.flag.push_back(static_cast<std::int16_t>(i % 3 - 1));
    g.id.push_back(std::int64_t{1} << 52 | i);
  }
  Fixture f(path);
  f.table("GALAXIES", rows,
          {{"RA", "D"}, {"DEC", "D"}, {"Z", "D"}, {"MAG", "E"}, {"FLAG", "I"}, {"ID", "K"}, {"NAME", "8A"}, {"POS", "3D"}});
  f.column(TDOUBLE, 1, g.ra);
  f.column(TDOUBLE, 2, g.dec);
  f.column(TDOUBLE, 3, g.z);
  f.column(TFLOAT, 4, g.mag);
  f.column(TSHORT, 5, g.flag);
  f.column(TLONGLONG, 6, g.id);
  return g;
}

}  // namespace

TEST(FitsReader, TableColumnsByNameNumberAndExtname) {
  const std::string path = temp("galaxies.fits");
  const long rows = 5000;  // several of cfitsio's row blocks
  const Galaxies g = write_galaxies(path, rows);
  ReadOptions o;
  o.column_names = {"RA", "DEC", "Z"};
  for (const std::string& spec : {path, path + ":1", path + ":GALAXIES"}) {
    const Catalogue c = read_catalogue(spec, o);
    ASSERT_EQ(c.points.size(), static_cast<std::size_t>(rows));
    for (long i = 0; i < rows; ++i) {
      ASSERT_EQ(c.points.coord(0)[i], g.ra[i]);
      ASSERT_EQ(c.points.coord(1)[i], g.dec[i]);
      ASSERT_EQ(c.points.coord(2)[i], g.z[i]);
    }
  }
  o.column_names = {"MAG", "FLAG", "ID"};
  const Catalogue c = read_catalogue(path, o);
  EXPECT_EQ(c.names, (std::vector<std::string>{"RA", "DEC", "Z", "MAG", "FLAG", "ID"}));
  for (long i = 0; i < rows; ++i) {
    ASSERT_EQ(c.points.coord(0)[i], static_cast<double>(g.mag[i]));
    ASSERT_EQ(c.points.coord(1)[i], g.flag[i]);
    ASSERT_EQ(c.points.coord(2)[i], static_cast<double>(g.id[i]));
  }
  o.column_names = {"RA", "NAME"};
  expect_error(ErrorKind::Input, "column NAME (strings) is not numeric", [&] { read_catalogue(path, o); });
  o.column_names = {"RA", "POS"};
  expect_error(ErrorKind::Input, "column POS (a vector of 3 values) is not numeric", [&] { read_catalogue(path, o); });
  EXPECT_EQ(format_of(path + ":GALAXIES"), FileFormat::Fits);
  EXPECT_EQ(format_of("x.FIT"), FileFormat::Fits);
}

TEST(FitsReader, GzipCompressedAndImages) {
  const std::string plain = temp("gz.fits");
  const Galaxies g = write_galaxies(plain, 300);
  const std::string gz = plain + ".gz";
  std::filesystem::remove(gz);
  ASSERT_EQ(std::system(("gzip -kf " + plain).c_str()), 0);
  ReadOptions o;
  o.column_names = {"RA", "DEC"};
  const PointSet p = read_points(gz, o);
  ASSERT_EQ(p.size(), 300u);
  for (std::size_t i = 0; i < 300; ++i) ASSERT_EQ(p.coord(1)[i], g.dec[i]);
  EXPECT_EQ(format_of(temp("X.FITS.GZ")), FileFormat::Fits);

  const std::string image = temp("image.fits");
  const std::vector<double> v = random_doubles(3 * 700, 24);
  {
    Fixture f(image);
    long naxes[2] = {3, 700};  // NAXIS1 (the fastest) is the columns
    fits_create_img(f.get(), DOUBLE_IMG, 2, naxes, &f.status());
    fits_write_img(f.get(), TDOUBLE, 1, static_cast<LONGLONG>(v.size()), const_cast<double*>(v.data()), &f.status());
    ASSERT_EQ(f.status(), 0);
    long cube[3] = {2, 2, 2};
    fits_create_img(f.get(), SHORT_IMG, 3, cube, &f.status());
    ASSERT_EQ(f.status(), 0);
  }
  const PointSet q = read_points(image);
  ASSERT_EQ(q.size(), 700u);
  ASSERT_EQ(q.dim(), 3);
  for (std::size_t i = 0; i < 700; ++i)
    for (int d = 0; d < 3; ++d) ASSERT_EQ(q.coord(d)[i], v[i * 3 + static_cast<std::size_t>(d)]);
  expect_error(ErrorKind::Input, "image.fits:1: a 3-D image", [&] { read_points(image + ":1"); });
}

TEST(FitsReader, BadFilesSayWhat) {
  const std::string path = temp("bad.fits");
  {
    Fixture f(path);
    f.table("WORDS", 3, {{"NAME", "8A"}});
    f.table("NONE", 0, {{"X", "D"}, {"Y", "D"}});
    f.table("HOLES", 3, {{"X", "D"}, {"Y", "D"}});
    f.column(TDOUBLE, 1, std::vector<double>{1, 2, 3});
    f.column(TDOUBLE, 2, std::vector<double>{1, std::nan(""), 3});
  }
  expect_error(ErrorKind::Input, "bad.fits:1: the table has no numeric column (it has: NAME (strings))", [&] {
    read_points(path);
  });
  expect_error(ErrorKind::Input, "bad.fits:NONE: the table is empty", [&] { read_points(path + ":NONE"); });
  expect_error(ErrorKind::Input, "bad.fits:HOLES: row 2 has a non-finite value 'nan' in column 2", [&] {
    read_points(path + ":HOLES");
  });
  expect_error(ErrorKind::Input, "bad.fits:7: no such HDU", [&] { read_points(path + ":7"); });
  expect_error(ErrorKind::Input, "bad.fits:NOPE: no HDU of that EXTNAME", [&] { read_points(path + ":NOPE"); });
  expect_error(ErrorKind::Input, "bad.fits:0: the HDU holds no data", [&] { read_points(path + ":0"); });
  const std::string text = temp("text.fits");
  std::ofstream(text) << "1 2 3\n4 5 6\n";
  expect_error(ErrorKind::Input, "text.fits: not a readable FITS file", [&] { read_points(text); });
  const std::string cut = temp("cut.fits");
  write_galaxies(cut, 2000);
  std::filesystem::resize_file(cut, std::filesystem::file_size(cut) / 2);
  expect_error(ErrorKind::Input, "cut.fits", [&] { read_points(cut); });
  const std::string empty = temp("empty.fits");
  std::ofstream{empty};
  expect_error(ErrorKind::Input, "empty.fits: the file is empty", [&] { read_points(empty); });
  expect_error(ErrorKind::Input, "missing.fits: cannot open: No such file", [&] { read_points(temp("missing.fits:1")); });
}

#endif
