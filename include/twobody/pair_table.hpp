#pragma once
// The data a pair expression reads (twobody/expression.hpp): every point's coordinates, a[0] …
// a[d−1] or the vector a, and named float64 scalar columns, a.NAME (a CSV header's names, an
// HDF5 table's fields, a FITS table's TTYPEs). The schema is what an expression is checked
// against before any data is read.
#include <cstddef>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "twobody/io.hpp"
#include "twobody/points.hpp"
#include "twobody/vectors.hpp"

namespace twobody {

struct Schema {
  int dim = 0;                     // coordinates of a point
  std::vector<std::string> names;  // the named scalar columns
  // Per named column: every value is exactly a float32 (integers within 2^24, values on a float32
  // grid): what the float32 fast path's bounds will use.
  std::vector<bool> exact_in_float32;

  // The column's index in `names`, or −1.
  int find(std::string_view name) const;
};

class PairTable {
 public:
  PairTable() = default;
  // Coordinates and named columns of the same length, each value finite: Error(Input) otherwise.
  PairTable(VectorSet coordinates, std::vector<std::string> names, std::vector<std::vector<double>> columns);
  // A point set's coordinates, its weights (if any) as the column "w".
  static PairTable from_points(const PointSet& p);

  std::size_t size() const noexcept { return coordinates_.size(); }
  int dim() const noexcept { return coordinates_.dim(); }
  const VectorSet& coordinates() const noexcept { return coordinates_; }
  const Schema& schema() const noexcept { return schema_; }
  std::span<const double> column(std::size_t k) const { return columns_[k]; }

 private:
  VectorSet coordinates_;
  std::vector<std::vector<double>> columns_;
  Schema schema_;
};

// A table from a file. The coordinates are ReadOptions' columns (by number or name), or by
// default every column; every column the file names (a text header, HDF5 fields, FITS TTYPEs) is
// a named column as well, coordinates included. Arrays without names (.npy, .fvecs) have
// coordinates only. Every value used is checked finite (Error(Input) naming the file, row and
// column).
PairTable read_table(const std::string& path, const ReadOptions& opt = {});

}  // namespace twobody
