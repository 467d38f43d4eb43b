#pragma once
// Catalogue readers. Every reader validates on the way in: a missing or empty file, a row with
// the wrong number of columns, an unparsable or non-finite value is an Error(Input) that names the
// file and the line (or point).
#include <span>
#include <string>
#include <vector>

#include "twobody/points.hpp"

namespace twobody {

enum class FileFormat { Auto, Text, Npy, FastFood };

struct ReadOptions {
  FileFormat format = FileFormat::Auto;  // Auto: by extension (.npy, .ff), otherwise text
  std::vector<int> columns;              // 1-based; empty: every column of the file
  int weight_column = 0;                 // 1-based; 0: no weights
  // 1-based column of integer jackknife region labels (>= 0); 0: none. Labels are kept as given
  // (PointSet::regions()); the correlation functions number the regions they find.
  int region_column = 0;
};

// Text: whitespace- or comma-separated numbers, one point per line, '#' starts a comment.
// .npy: a 2-D float64 or float32 array (one point per row), or a 1-D array (one coordinate).
// .ff: Corrfunc's fast-food format (Fortran records: header, then one record per column).
PointSet read_points(const std::string& path, const ReadOptions& opt = {});

// "1,2,3" -> {1, 2, 3}; throws Error(Config) on anything else.
std::vector<int> parse_column_list(const std::string& spec);

}  // namespace twobody

namespace twobody {
// Writes points as text (one per line, columns separated by spaces, 17 significant digits so they
// read back exactly) or, for a .npy path, as a float64 NumPy array; weights become a last column.
void write_points(const std::string& path, const PointSet& p);
// A dense rows x cols matrix (row-major): a .npy path as a float64 NumPy array of that shape,
// any other as text, one row a line, values to 17 significant digits.
void write_matrix(const std::string& path, std::size_t rows, std::size_t cols, std::span<const double> values);
}  // namespace twobody
