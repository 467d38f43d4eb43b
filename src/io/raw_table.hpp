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

struct RawTable {
  int ncols = 0;
  std::size_t rows = 0;
  std::vector<std::vector<double>> cols;  // cols[c-1][row]
  std::vector<std::size_t> line_of_row;   // text files: the 1-based line of each row
  std::vector<std::string> names;         // a header's column names (text files with one); else empty
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

// A file opened for reading and its status, or Error(Input) with the reason (no such file, no
// permission, a directory). The caller closes the descriptor.
int open_input(const std::string& path, struct stat& st);
std::string read_whole_file(const std::string& path);
RawTable read_text(const std::string& path);
RawTable read_npy(const std::string& path);
RawTable read_fast_food(const std::string& path);

}  // namespace twobody
