// HDF5 vectors: a 2-D (or 1-D) numeric dataset's rows, read a block of rows at a time straight into
// the set's storage (the ANN benchmarks' /train, /test: float32). A table is left to the caller.
#include <fmt/format.h>

#include <algorithm>
#include <climits>
#include <cstdint>
#include <type_traits>
#include <variant>
#include <vector>

#include "twobody/detail/io/hdf5_dataset.hpp"
#include "twobody/detail/io/vector_files.hpp"

namespace twobody {

namespace {

using hdf5::Handle;
using hdf5::Place;

constexpr std::size_t kBlockValues = std::size_t{1} << 20;  // values a read converts at a time

// The dataset's rows in `memory_type`, a block at a time: block(first row, rows, buffer) after each
// read into `buffer` (which may point into the caller's storage: to(first row) gives where).
template <class To, class Block>
void read_blocks(hid_t ds, hid_t memory_type, hsize_t rows, hsize_t cols, int rank, const To& to, const Block& block,
                 const Place& p) {
  Handle file_space(H5Dget_space(ds), H5Sclose);
  if (!file_space.valid()) p.fail("cannot read the dataset's shape");
  const hsize_t step = std::max<hsize_t>(1, kBlockValues / cols);
  for (hsize_t r0 = 0; r0 < rows; r0 += step) {
    const hsize_t n = std::min(step, rows - r0);
    const hsize_t start[2] = {r0, 0}, count[2] = {n, cols};
    Handle memory(H5Screate_simple(rank, count, nullptr), H5Sclose);
    void* buffer = to(r0);
    if (!memory.valid() || H5Sselect_hyperslab(file_space.get(), H5S_SELECT_SET, start, nullptr, count, nullptr) < 0 ||
        H5Dread(ds, memory_type, memory.get(), file_space.get(), H5P_DEFAULT, buffer) < 0)
      p.fail(fmt::format("cannot read rows {} to {}", r0 + 1, r0 + n));
    block(r0, n, buffer);
  }
}

// Rows read straight into the set's storage, HDF5 converting to T where the file's type differs.
template <class T>
std::vector<T> read_direct(hid_t ds, hid_t memory_type, hsize_t rows, hsize_t cols, int rank, const Place& p) {
  std::vector<T> out(static_cast<std::size_t>(rows * cols));
  read_blocks(
      ds, memory_type, rows, cols, rank, [&](hsize_t r0) { return static_cast<void*>(out.data() + r0 * cols); },
      [](hsize_t, hsize_t, void*) {}, p);
  return out;
}

// 64-bit integers as float64, each checked within 2^53 in magnitude (where float64 is exact).
template <class Int>
std::vector<double> read_wide_integers(hid_t ds, hid_t memory_type, hsize_t rows, hsize_t cols, int rank, const Place& p) {
  std::vector<double> out(static_cast<std::size_t>(rows * cols));
  std::vector<Int> buf(static_cast<std::size_t>(std::min<hsize_t>(rows, std::max<hsize_t>(1, kBlockValues / cols)) * cols));
  constexpr Int kExact = Int{1} << 53;
  read_blocks(
      ds, memory_type, rows, cols, rank, [&](hsize_t) { return static_cast<void*>(buf.data()); },
      [&](hsize_t r0, hsize_t n, void*) {
        for (std::size_t i = 0; i < n * cols; ++i) {
          const Int v = buf[i];
          bool beyond = v > kExact;
          if constexpr (std::is_signed_v<Int>) beyond = beyond || v < -kExact;
          if (beyond)
            p.fail(fmt::format("row {}, column {}: {} is beyond 2^53 in magnitude, where float64 (the vectors' type for "
                               "integers) would round it",
                               r0 + i / cols + 1, i % cols + 1, v));
          out[r0 * cols + i] = static_cast<double>(v);
        }
      },
      p);
  return out;
}

VectorSet read_numeric_vectors(hid_t ds, const Place& p) {
  Handle type(H5Dget_type(ds), H5Tclose);
  if (!type.valid()) p.fail("cannot read the dataset's type");
  const std::vector<hsize_t> dims = hdf5::dimensions(ds, p);
  if (dims.size() > 2)
    p.fail(fmt::format("a {}-D dataset: vectors are a 2-D dataset (rows x dimensions) or a 1-D one", dims.size()));
  const int rank = static_cast<int>(dims.size());
  const hsize_t rows = dims[0], cols = rank == 2 ? dims[1] : 1;
  if (rows == 0 || cols == 0) p.fail("the dataset is empty");
  if (cols > INT_MAX) p.fail(fmt::format("{} columns is beyond any vector", cols));
  const std::size_t width = H5Tget_size(type.get());
  // In floating point: a hostile shape's product can wrap 64 bits.
  hdf5::check_storage(ds, static_cast<double>(rows) * static_cast<double>(cols), std::max<std::size_t>(1, width), p);
  const std::size_t n = static_cast<std::size_t>(rows);
  const int dim = static_cast<int>(cols);
  const bool is_float = H5Tget_class(type.get()) == H5T_FLOAT;
  if (is_float && width == 2) {
    const Handle half = hdf5::half_float_type();
    if (half.valid() && H5Tequal(type.get(), half.get()) > 0)
      return VectorSet::from_half_bits(read_direct<std::uint16_t>(ds, half.get(), rows, cols, rank, p), n, dim);
    hdf5::error_reason();
  }
  if (!hdf5::standard_numeric(type.get())) p.fail(fmt::format("the dataset holds {}", hdf5::nonstandard(type.get())));
  if (is_float && width == 4) return VectorSet::from_rows(read_direct<float>(ds, H5T_NATIVE_FLOAT, rows, cols, rank, p), n, dim);
  if (is_float || width < 8)  // float64, and integers of up to 32 bits: exact in float64
    return VectorSet::from_rows(read_direct<double>(ds, H5T_NATIVE_DOUBLE, rows, cols, rank, p), n, dim);
  if (H5Tget_sign(type.get()) == H5T_SGN_NONE)
    return VectorSet::from_rows(read_wide_integers<std::uint64_t>(ds, H5T_NATIVE_UINT64, rows, cols, rank, p), n, dim);
  return VectorSet::from_rows(read_wide_integers<std::int64_t>(ds, H5T_NATIVE_INT64, rows, cols, rank, p), n, dim);
}

}  // namespace

std::variant<VectorSet, RawTable> read_hdf5_vectors(const std::string& file, const std::string& inside) {
  std::variant<VectorSet, RawTable> out;
  hdf5::with_object(file, inside, [&](hid_t object, const Place& p, hid_t lapl) {
    if (H5Iget_type(object) == H5I_DATASET) {
      Handle type(H5Dget_type(object), H5Tclose);
      if (type.valid() && hdf5::numeric(H5Tget_class(type.get()))) {
        out = read_numeric_vectors(object, p);
        return;
      }
    }
    out = hdf5::read_object(object, p, lapl);
  });
  return out;
}

}  // namespace twobody
