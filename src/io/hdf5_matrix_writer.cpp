// The HDF5 matrix sink (matrix_writer.hpp): a chunked dataset /matrix, float64 or float32, each
// tile written as one hyperslab, so a matrix larger than memory is never held whole.
#include <fmt/format.h>

#include <algorithm>
#include <vector>

#include "twobody/detail/io/hdf5_file.hpp"
#include "twobody/detail/io/matrix_writer.hpp"
#include "twobody/error.hpp"

namespace twobody {

namespace {

using hdf5::Handle;

class Hdf5MatrixSink final : public MatrixSink {
 public:
  Hdf5MatrixSink(const std::string& file, const std::string& path, std::size_t rows, std::size_t cols, Element dtype)
      : MatrixSink(rows, cols), path_(path), f32_(dtype == Element::F32) {
    hdf5::silence_errors();
    file_ = Handle(H5Fcreate(file.c_str(), H5F_ACC_TRUNC, H5P_DEFAULT, H5P_DEFAULT), H5Fclose);
    if (!file_.valid()) fail("cannot create the HDF5 file");
    const hsize_t dims[2] = {rows, cols};
    space_ = Handle(H5Screate_simple(2, dims, nullptr), H5Sclose);
    // Chunks of 64 rows by up to 1024 columns (512 KiB of float64): a block of rows fills whole
    // chunks, a mirrored strip a column of them.
    const hsize_t chunk[2] = {std::max<hsize_t>(1, std::min<hsize_t>(rows, 64)), std::max<hsize_t>(1, std::min<hsize_t>(cols, 1024))};
    Handle props(H5Pcreate(H5P_DATASET_CREATE), H5Pclose);
    if (!space_.valid() || !props.valid() || (rows > 0 && cols > 0 && H5Pset_chunk(props.get(), 2, chunk) < 0))
      fail("cannot create the dataset /matrix");
    set_ = Handle(H5Dcreate2(file_.get(), "matrix", f32_ ? H5T_IEEE_F32LE : H5T_IEEE_F64LE, space_.get(), H5P_DEFAULT,
                             props.get(), H5P_DEFAULT),
                  H5Dclose);
    if (!set_.valid()) fail("cannot create the dataset /matrix");
  }

  void put(std::size_t r0, std::size_t nr, std::size_t c0, std::size_t nc, const double* v, std::size_t ld) override {
    if (nr == 0 || nc == 0) return;
    // The memory side: nr x ld values, of which the first nc of each row.
    const hsize_t mdims[2] = {nr, ld}, start[2] = {r0, c0}, count[2] = {nr, nc}, zero[2] = {0, 0};
    Handle memory(H5Screate_simple(2, mdims, nullptr), H5Sclose);
    if (!memory.valid() || H5Sselect_hyperslab(memory.get(), H5S_SELECT_SET, zero, nullptr, count, nullptr) < 0 ||
        H5Sselect_hyperslab(space_.get(), H5S_SELECT_SET, start, nullptr, count, nullptr) < 0 ||
        H5Dwrite(set_.get(), H5T_NATIVE_DOUBLE, memory.get(), space_.get(), H5P_DEFAULT, v) < 0)
      fail("cannot write the dataset /matrix");
  }

  void finish() override {
    set_ = Handle();
    space_ = Handle();
    if (H5Fclose(file_.release()) < 0) fail("write failed");
  }


 private:
  [[noreturn]] void fail(const std::string& what) {
    const std::string reason = hdf5::error_reason();
    throw_output(reason.empty() ? fmt::format("{}: {}", path_, what) : fmt::format("{}: {}: {}", path_, what, reason));
  }

  std::string path_;
  bool f32_;
  Handle file_, space_, set_;
};

}  // namespace

std::unique_ptr<MatrixSink> open_hdf5_matrix(const std::string& file, const std::string& path, std::size_t rows,
                                             std::size_t cols, Element dtype) {
  return std::make_unique<Hdf5MatrixSink>(file, path, rows, cols, dtype);
}

}  // namespace twobody
