// Writes the seed corpus of files_fuzz.cpp: small valid HDF5 and FITS catalogues of each kind the
// readers take, each behind the fuzzer's mode byte. Usage: files_seeds DIR (scripts/fuzz-readers
// --files runs it when the corpus is empty).
#include <fitsio.h>
#include <hdf5.h>

#include <cstdint>
#include <cstdio>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

namespace {

const std::vector<double> kValues = {1.5, -2.25, 3, 4.125, 5, 6.5, -7, 8, 9.75, 10, 11.5, 12, 13, 14.25, 15};

// The fuzzer's input: the mode byte, then the file.
void seed(const std::string& dir, const std::string& name, std::uint8_t mode, const std::string& file) {
  std::ifstream in(file, std::ios::binary);
  std::stringstream s;
  s << in.rdbuf();
  std::ofstream out(dir + "/" + name, std::ios::binary);
  out.put(static_cast<char>(mode));
  out << s.str();
  std::remove(file.c_str());
}

void hdf5_seeds(const std::string& dir, bool latest) {
  const std::string file = dir + "/tmp.h5";
  const std::string tag = latest ? "-latest" : "";
  const auto create = [&] {
    const hid_t fapl = H5Pcreate(H5P_FILE_ACCESS);
    if (latest) H5Pset_libver_bounds(fapl, H5F_LIBVER_LATEST, H5F_LIBVER_LATEST);
    const hid_t f = H5Fcreate(file.c_str(), H5F_ACC_TRUNC, H5P_DEFAULT, fapl);
    H5Pclose(fapl);
    return f;
  };
  const auto dataset = [](hid_t where, const char* name, hid_t type, std::vector<hsize_t> dims, const void* data) {
    const hid_t space = H5Screate_simple(static_cast<int>(dims.size()), dims.data(), nullptr);
    const hid_t ds = H5Dcreate2(where, name, type, space, H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT);
    H5Dwrite(ds, type, H5S_ALL, H5S_ALL, H5P_DEFAULT, data);
    H5Dclose(ds);
    H5Sclose(space);
  };
  hid_t f = create();
  dataset(f, "points", H5T_NATIVE_DOUBLE, {5, 3}, kValues.data());
  H5Fclose(f);
  seed(dir, "h5-points" + tag, 2 | 1 << 3, file);
  f = create();
  struct Row {
    double x;
    float y;
    std::int32_t z;
    char name[4];
  } rows[4] = {{1, 2, 3, "a"}, {4, 5, 6, "b"}, {7, 8, 9, "c"}, {1.5, 2.5, 3, "d"}};
  const hid_t text = H5Tcopy(H5T_C_S1);
  H5Tset_size(text, 4);
  const hid_t t = H5Tcreate(H5T_COMPOUND, sizeof(Row));
  H5Tinsert(t, "x", HOFFSET(Row, x), H5T_NATIVE_DOUBLE);
  H5Tinsert(t, "y", HOFFSET(Row, y), H5T_NATIVE_FLOAT);
  H5Tinsert(t, "z", HOFFSET(Row, z), H5T_NATIVE_INT32);
  H5Tinsert(t, "name", HOFFSET(Row, name), text);
  dataset(f, "table", t, {4}, rows);
  H5Tclose(t);
  H5Tclose(text);
  H5Fclose(f);
  seed(dir, "h5-table" + tag, 4 | 2 << 3, file);
  f = create();
  const hid_t g = H5Gcreate2(f, "cat", H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT);
  dataset(g, "x", H5T_NATIVE_DOUBLE, {5}, kValues.data());
  dataset(g, "y", H5T_NATIVE_DOUBLE, {5}, kValues.data() + 5);
  dataset(g, "w", H5T_NATIVE_INT16, {5}, std::vector<std::int16_t>{1, 2, 3, 4, 5}.data());
  H5Gclose(g);
  H5Fclose(f);
  seed(dir, "h5-group" + tag, 6 | 3 << 3, file);
}

void fits_seeds(const std::string& dir) {
  const std::string file = dir + "/tmp.fits";
  int status = 0;
  fitsfile* f = nullptr;
  std::remove(file.c_str());
  fits_create_file(&f, file.c_str(), &status);
  char* names[] = {const_cast<char*>("RA"), const_cast<char*>("DEC"), const_cast<char*>("Z"), const_cast<char*>("ID"),
                   const_cast<char*>("NAME")};
  char* forms[] = {const_cast<char*>("D"), const_cast<char*>("E"), const_cast<char*>("D"), const_cast<char*>("J"),
                   const_cast<char*>("4A")};
  fits_create_tbl(f, BINARY_TBL, 5, 5, names, forms, nullptr, "GALAXIES", &status);
  for (int c : {1, 2, 3}) fits_write_col(f, TDOUBLE, c, 1, 1, 5, const_cast<double*>(kValues.data()) + 5 * (c - 1), &status);
  long ids[5] = {1, 2, 3, 4, 5};
  fits_write_col(f, TLONG, 4, 1, 1, 5, ids, &status);
  fits_close_file(f, &status);
  seed(dir, "fits-table", 1 | 2 << 1 | 2 << 3, file);
  std::remove(file.c_str());
  fits_create_file(&f, file.c_str(), &status);
  long naxes[2] = {3, 5};
  fits_create_img(f, FLOAT_IMG, 2, naxes, &status);
  fits_write_img(f, TDOUBLE, 1, 15, const_cast<double*>(kValues.data()), &status);
  fits_close_file(f, &status);
  seed(dir, "fits-image", 1 | 1 << 3, file);
  if (status) std::fprintf(stderr, "files_seeds: cfitsio status %d\n", status);
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 2) {
    std::fprintf(stderr, "usage: files_seeds DIR\n");
    return 2;
  }
  hdf5_seeds(argv[1], false);
  hdf5_seeds(argv[1], true);
  fits_seeds(argv[1]);
  return 0;
}
