#pragma once
// The binary outputs (.npy inside .npz, HDF5): named arrays produced a block of rows at a time, so
// a writer never holds a second copy of a large matrix or catalogue.
#include <cstddef>
#include <functional>
#include <iterator>
#include <ostream>
#include <span>
#include <string>
#include <vector>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "twobody/table.hpp"

namespace twobody {

struct ArrayOut {
  std::string name;
  bool unsigned_integers = false;  // uint64 values; otherwise float64
  std::size_t rows = 0;
  std::size_t cols = 0;  // 0: a 1-D array of `rows` values
  // Writes rows [first, first + n) of the array, row-major, 8 bytes a value, into `out`.
  std::function<void(std::size_t first, std::size_t n, void* out)> rows_at;
  std::size_t width() const { return cols == 0 ? 1 : cols; }
};

// An array over values already in memory, row-major.
ArrayOut array_over(std::string name, std::size_t rows, std::size_t cols, std::span<const double> values);
// A table's columns, one 1-D array each, by the column's name.
std::vector<ArrayOut> arrays_of(const Table& t);

// The .npy header (version 1.0, little-endian, C order) of an array.
std::string npy_header(const ArrayOut& a);
// ... of a rows x cols array (cols 0: 1-D) of the dtype `descr` ("<f4").
std::string npy_header(const char* descr, std::size_t rows, std::size_t cols);
// A .npz archive (an uncompressed zip, ZIP64 where sizes need it) holding NAME.npy for each array.
void write_npz(std::ostream& out, const std::vector<ArrayOut>& arrays);

// rows x cols values as text, one row a line, 17 significant digits (they read back exactly).
template <class Value>
void write_text_rows(std::ostream& out, std::size_t rows, std::size_t cols, const Value& value) {
  fmt::memory_buffer buf;
  for (std::size_t i = 0; i < rows; ++i) {
    for (std::size_t c = 0; c < cols; ++c) {
      if (c) buf.push_back(' ');
      fmt::format_to(std::back_inserter(buf), "{:.17g}", value(i, c));
    }
    buf.push_back('\n');
    if (buf.size() > (1 << 20)) {
      out.write(buf.data(), static_cast<std::streamsize>(buf.size()));
      buf.clear();
    }
  }
  out.write(buf.data(), static_cast<std::streamsize>(buf.size()));
}

// Like write_output, for writers that need a file name rather than a stream (HDF5): `fill` creates
// the file at the path it is given (a temporary one), which is then renamed over `path` (or, for
// standard output and devices, copied there). Whole or nothing, as write_output.
void write_output_file(const std::string& path, const std::function<void(const std::string& file)>& fill);

// HDF5 outputs (Error(Config) in a build without HDF5): each array a float64 or uint64 dataset
// /NAME; a table a compound dataset /table, one field per column, its metadata a JSON string
// attribute "meta".
void write_hdf5_arrays(const std::string& path, const std::vector<ArrayOut>& arrays);
void write_hdf5_table(const std::string& path, const std::vector<ArrayOut>& columns, const nlohmann::json& meta);

}  // namespace twobody
