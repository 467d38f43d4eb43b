// NumPy .npy catalogues: the array's columns as float64.
#include <fmt/format.h>

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <vector>

#include "twobody/detail/io/mapped_file.hpp"
#include "twobody/detail/io/npy_header.hpp"
#include "twobody/detail/io/raw_table.hpp"

namespace twobody {

RawTable read_npy(const std::string& path) {
  const MappedFile file(path);
  const NpyArray a = parse_npy(file.view(), path, {"f8", "f4", "i8", "i4"}, "float64, float32, int64 or int32");
  const std::size_t rows = a.rows, ncols = a.cols;
  const bool fortran = a.fortran;

  RawTable t;
  t.ncols = static_cast<int>(ncols);
  t.rows = rows;
  t.row_word = "row";
  // Each column zero-filled (and so first touched) by its own thread: for a 10^7-row file the fill
  // is most of the read, and std::vector has no uninitialised constructor.
  t.cols.resize(ncols);
#pragma omp parallel for schedule(dynamic, 1) if (rows > 100000)
  for (std::ptrdiff_t c = 0; c < static_cast<std::ptrdiff_t>(ncols); ++c) t.cols[static_cast<std::size_t>(c)].resize(rows);
  const char* p = a.data;
  const std::size_t header = static_cast<std::size_t>(p - file.view().data());
  // In slices of about 64 MB of the file, each released once converted (MappedFile::release): the
  // read peaks at the columns plus one slice, not the columns plus the file.
  const auto convert = [&](auto tag) {
    using T = decltype(tag);
    const std::size_t slice = std::max<std::size_t>(1, (std::size_t(64) << 20) / (sizeof(T) * std::max<std::size_t>(ncols, 1)));
    for (std::size_t r0 = 0; r0 < rows; r0 += slice) {
      const std::size_t r1 = std::min(rows, r0 + slice);
      const std::ptrdiff_t n = static_cast<std::ptrdiff_t>(r1 - r0);
#pragma omp parallel for schedule(static) if (n > 100000)
      for (std::ptrdiff_t k = 0; k < n; ++k)
        for (std::size_t c = 0; c < ncols; ++c) {
          const std::size_t r = r0 + static_cast<std::size_t>(k);
          const std::size_t idx = fortran ? c * rows + r : r * ncols + c;
          T v;
          std::memcpy(&v, p + sizeof(T) * idx, sizeof(T));
          t.cols[c][r] = static_cast<double>(v);
        }
      if (fortran) {
        for (std::size_t c = 0; c < ncols; ++c) file.release(header + sizeof(T) * (c * rows + r0), sizeof(T) * (r1 - r0));
      } else {
        file.release(header + sizeof(T) * r0 * ncols, sizeof(T) * (r1 - r0) * ncols);
      }
    }
  };
  if (a.kind == 'f' && a.width == 8) convert(double{});
  else if (a.kind == 'f') convert(float{});
  else if (a.width == 8) convert(std::int64_t{});
  else convert(std::int32_t{});
  return t;
}

}  // namespace twobody
