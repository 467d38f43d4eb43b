#pragma once
// The vector readers and writers of each format, behind read_vectors and write_vectors (io.hpp).
#include <string>
#include <variant>

#include "twobody/detail/io/raw_table.hpp"
#include "twobody/io.hpp"
#include "twobody/vectors.hpp"

namespace twobody {

// .fvecs (float32 rows), .bvecs (uint8, as float32), .ivecs (int32, as float64).
VectorSet read_vecs(const std::string& path, FileFormat f);
// .fvecs, .bvecs, .ivecs: Error(Config) naming the first value the format cannot hold exactly.
void write_vecs(const std::string& path, FileFormat f, const VectorSet& v);

// An HDF5 numeric dataset's rows, or (a compound dataset, a group of columns) the table for the
// caller's choice of columns. Without HDF5 in the build: Error(Config).
std::variant<VectorSet, RawTable> read_hdf5_vectors(const std::string& file, const std::string& inside);
// The dataset /vectors, element type kept.
void write_hdf5_vectors(const std::string& path, const VectorSet& v);

// The first row (0-based) in [0, n) for which bad(row) holds, or n; searched in parallel over
// large sets, every row looked at (the first error in file order is the one reported).
template <class Bad>
std::size_t first_row_where(std::size_t n, const Bad& bad) {
  std::ptrdiff_t first = static_cast<std::ptrdiff_t>(n);
#pragma omp parallel for reduction(min : first) schedule(static) if (n > 4096)
  for (std::ptrdiff_t i = 0; i < static_cast<std::ptrdiff_t>(n); ++i)
    if (i < first && bad(static_cast<std::size_t>(i))) first = i;
  return static_cast<std::size_t>(first);
}

}  // namespace twobody
