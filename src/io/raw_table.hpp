#pragma once
// A file's numeric columns before they become points; each reader fills one.
#include <cmath>
#include <optional>
#include <cstddef>
#include <string>
#include <vector>

#include <sys/stat.h>

#include <fmt/format.h>

#include "twobody/error.hpp"

namespace twobody {

struct ReadOptions;

struct RawTable {
  int ncols = 0;
  std::size_t rows = 0;
  std::vector<std::vector<double>> cols;  // cols[c-1][row]
  std::vector<std::size_t> line_of_row;   // text files: the 1-based line of each row
  std::vector<std::string> names;         // the columns' names (a text header, HDF5 fields, FITS TTYPEs)
  // Named columns that are not numbers (an HDF5 string field, a FITS vector column), with the
  // reason: "name (strings)". Not columns, but a request for one by name says why.
  std::vector<std::string> not_numeric;
  std::string row_word = "point";

  const std::vector<double>& column(int c) const { return cols[c - 1]; }

  // "path:line" for text files, "path: point N" otherwise.
  std::string where(std::size_t r, const std::string& path) const {
    if (!line_of_row.empty()) return fmt::format("{}:{}", path, line_of_row[r]);
    return fmt::format("{}: {} {}", path, row_word, r + 1);
  }

  void check_finite(int c, const std::string& path) const {
    const auto& v = column(c);
    // The first non-finite row, found in parallel (a serial pass was a fifth of a large .npy read).
    const std::ptrdiff_t n = static_cast<std::ptrdiff_t>(v.size());
    std::ptrdiff_t first = n;
#pragma omp parallel for reduction(min : first) schedule(static) if (n > 100000)
    for (std::ptrdiff_t i = 0; i < n; ++i)
      if (!std::isfinite(v[static_cast<std::size_t>(i)]) && i < first) first = i;
    if (first == n) return;
    const std::size_t r = static_cast<std::size_t>(first);
    if (!line_of_row.empty())
      throw_input(fmt::format("{}:{}: non-finite value '{}' in column {}", path, line_of_row[r], v[r], c));
    throw_input(fmt::format("{}: {} {} has a non-finite value '{}' in column {}", path, row_word, r + 1, v[r], c));
  }
};

// The columns `opt` asks for (1-based): given by number, by name, or by default every column the
// weights, regions and values do not take (the first default_columns of them, the rest added to
// `unused`). Checks names against the table's header; not that numbers are within it.
std::vector<int> choose_columns(const RawTable& t, const ReadOptions& opt, const std::string& path,
                                std::vector<int>& unused);

// A file opened for reading and its status, or Error(Input) with the reason (no such file, no
// permission, a directory). The caller closes the descriptor.
int open_input(const std::string& path, struct stat& st);
std::string read_whole_file(const std::string& path);
RawTable read_text(const std::string& path);
RawTable read_npy(const std::string& path);
RawTable read_fast_food(const std::string& path);

// "cat.h5:/table" -> {"cat.h5", "/table"}; "cat.fits:2" -> {"cat.fits", "2"}. The split is at the
// first ':' after an HDF5 or FITS extension, unless the whole spec names an existing file.
struct FilePart {
  std::string file;
  std::string inside;  // empty: none given
};
FilePart split_file_part(const std::string& spec);
// Without HDF5 or cfitsio in the build these throw Error(Config).
RawTable read_hdf5(const std::string& file, const std::string& inside);
RawTable read_fits(const std::string& file, const std::string& hdu);

}  // namespace twobody
