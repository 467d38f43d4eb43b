// HDF5 outputs: arrays as datasets (/points, /matrix), result tables as one compound dataset
// /table (h5py reads it as a structured array, pandas.DataFrame(f["table"][:]) as a frame), the
// run's metadata as its JSON attribute "meta". Written a block of rows at a time, into a
// temporary file that write_output_file renames into place.
#include <fmt/format.h>

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <vector>

#include "twobody/detail/io/array_output.hpp"
#include "twobody/detail/io/hdf5_file.hpp"
#include "twobody/detail/io/vector_files.hpp"
#include "twobody/error.hpp"

namespace twobody {

namespace {

using hdf5::Handle;

constexpr std::size_t kBlockValues = std::size_t{1} << 20;

[[noreturn]] void fail(const std::string& path, const std::string& what) {
  const std::string reason = hdf5::error_reason();
  throw_output(reason.empty() ? fmt::format("{}: {}", path, what) : fmt::format("{}: {}: {}", path, what, reason));
}

Handle create_file(const std::string& file, const std::string& path) {
  hdf5::silence_errors();
  Handle f(H5Fcreate(file.c_str(), H5F_ACC_TRUNC, H5P_DEFAULT, H5P_DEFAULT), H5Fclose);
  if (!f.valid()) fail(path, "cannot create the HDF5 file");
  return f;
}

// A rows x width dataset (width 0: 1-D) of `file_type`, filled a block of rows at a time by
// `rows_at` in `memory_type`.
void write_dataset(hid_t f, const std::string& name, hid_t file_type, hid_t memory_type, std::size_t rows,
                   std::size_t cols, std::size_t row_bytes, const std::function<void(std::size_t, std::size_t, void*)>& rows_at,
                   const std::string& path, Handle* keep = nullptr) {
  const int rank = cols == 0 ? 1 : 2;
  const hsize_t dims[2] = {rows, cols};
  Handle space(H5Screate_simple(rank, dims, nullptr), H5Sclose);
  Handle ds(H5Dcreate2(f, name.c_str(), file_type, space.get(), H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT), H5Dclose);
  if (!space.valid() || !ds.valid()) fail(path, fmt::format("cannot create the dataset /{}", name));
  const std::size_t block = std::max<std::size_t>(1, kBlockValues / std::max<std::size_t>(1, cols));
  std::vector<unsigned char> buf(std::min(rows, block) * row_bytes);
  for (std::size_t r = 0; r < rows; r += block) {
    const hsize_t start[2] = {r, 0}, count[2] = {std::min(block, rows - r), cols};
    rows_at(r, count[0], buf.data());
    Handle memory(H5Screate_simple(rank, count, nullptr), H5Sclose);
    if (!memory.valid() || H5Sselect_hyperslab(space.get(), H5S_SELECT_SET, start, nullptr, count, nullptr) < 0 ||
        H5Dwrite(ds.get(), memory_type, memory.get(), space.get(), H5P_DEFAULT, buf.data()) < 0)
      fail(path, fmt::format("cannot write the dataset /{}", name));
  }
  if (keep) *keep = std::move(ds);
}

// Closes a file whose objects are all closed: the last of its data reaches the disk here.
void close_file(Handle& f, const std::string& path) {
  if (H5Fclose(f.release()) < 0) fail(path, "write failed");
}

}  // namespace

void write_hdf5_vectors(const std::string& path, const VectorSet& v) {
  const std::size_t row_bytes = element_bytes(v.element()) * static_cast<std::size_t>(v.dim());
  const auto rows_at = [&](std::size_t first, std::size_t n, void* out) {
    for (std::size_t i = 0; i < n; ++i) std::memcpy(static_cast<char*>(out) + i * row_bytes, v.row(first + i), row_bytes);
  };
  write_output_file(path, [&](const std::string& file) {
    Handle f = create_file(file, path);
    {
      const bool f16 = v.element() == Element::F16, f32 = v.element() == Element::F32;
      const Handle half = f16 ? hdf5::half_float_type() : Handle();
      if (f16 && !half.valid()) fail(path, "cannot make the float16 type");
      const hid_t type = f16 ? half.get() : f32 ? H5T_IEEE_F32LE : H5T_IEEE_F64LE;
      const hid_t memory = f16 ? half.get() : f32 ? H5T_NATIVE_FLOAT : H5T_NATIVE_DOUBLE;
      write_dataset(f.get(), "vectors", type, memory, v.size(), static_cast<std::size_t>(v.dim()), row_bytes, rows_at, path);
    }
    close_file(f, path);
  });
}

void write_hdf5_arrays(const std::string& path, const std::vector<ArrayOut>& arrays) {
  write_output_file(path, [&](const std::string& file) {
    Handle f = create_file(file, path);
    for (const ArrayOut& a : arrays) {
      const hid_t type = a.unsigned_integers ? H5T_STD_U64LE : H5T_IEEE_F64LE;
      const hid_t memory = a.unsigned_integers ? H5T_NATIVE_UINT64 : H5T_NATIVE_DOUBLE;
      write_dataset(f.get(), a.name, type, memory, a.rows, a.cols, a.width() * 8, a.rows_at, path);
    }
    close_file(f, path);
  });
}

void write_hdf5_table(const std::string& path, const std::vector<ArrayOut>& columns, const nlohmann::json& meta_json) {
  const std::size_t rows = columns.empty() ? 0 : columns.front().rows;
  write_output_file(path, [&](const std::string& file) {
    Handle f = create_file(file, path);
    const std::size_t width = std::max<std::size_t>(1, columns.size());
    Handle type(H5Tcreate(H5T_COMPOUND, width * 8), H5Tclose);
    Handle memory(H5Tcreate(H5T_COMPOUND, width * 8), H5Tclose);
    for (std::size_t k = 0; k < columns.size(); ++k) {
      const bool u = columns[k].unsigned_integers;
      const char* name = columns[k].name.c_str();
      if (!type.valid() || !memory.valid() || H5Tinsert(type.get(), name, k * 8, u ? H5T_STD_U64LE : H5T_IEEE_F64LE) < 0 ||
          H5Tinsert(memory.get(), name, k * 8, u ? H5T_NATIVE_UINT64 : H5T_NATIVE_DOUBLE) < 0)
        fail(path, fmt::format("cannot make a table field '{}'", columns[k].name));
    }
    // Rows of the compound: each column's values interleaved, 8 bytes a field.
    const auto rows_at = [&](std::size_t first, std::size_t n, void* out) {
      std::vector<std::uint64_t> column(n);
      auto* row = static_cast<std::uint64_t*>(out);
      for (std::size_t k = 0; k < columns.size(); ++k) {
        columns[k].rows_at(first, n, column.data());
        for (std::size_t i = 0; i < n; ++i) row[i * width + k] = column[i];
      }
    };
    {
      Handle ds;
      write_dataset(f.get(), "table", type.get(), memory.get(), rows, 0, width * 8, rows_at, path, &ds);
      const std::string meta = meta_json.dump();
      Handle text(H5Tcopy(H5T_C_S1), H5Tclose);
      Handle scalar(H5Screate(H5S_SCALAR), H5Sclose);
      if (!text.valid() || H5Tset_size(text.get(), std::max<std::size_t>(1, meta.size())) < 0 || !scalar.valid())
        fail(path, "cannot write the table's metadata");
      Handle attr(H5Acreate2(ds.get(), "meta", text.get(), scalar.get(), H5P_DEFAULT, H5P_DEFAULT), H5Aclose);
      if (!attr.valid() || H5Awrite(attr.get(), text.get(), meta.c_str()) < 0)
        fail(path, "cannot write the table's metadata");
    }
    close_file(f, path);
  });
}

}  // namespace twobody
