#include <fmt/format.h>

#include <charconv>
#include <string_view>

#include "twobody/detail/io/raw_table.hpp"

namespace twobody {

namespace {

bool is_separator(char c) { return c == ' ' || c == '\t' || c == ',' || c == '\r' || c == ';'; }

}  // namespace

RawTable read_text(const std::string& path) {
  const std::string text = read_whole_file(path);
  RawTable t;
  std::vector<double> row;
  std::size_t lineno = 0, pos = 0;
  while (pos < text.size()) {
    std::size_t end = text.find('\n', pos);
    if (end == std::string::npos) end = text.size();
    std::string_view line(text.data() + pos, end - pos);
    pos = end + 1;
    ++lineno;
    if (const auto h = line.find('#'); h != std::string_view::npos) line = line.substr(0, h);
    row.clear();
    std::size_t i = 0;
    while (i < line.size()) {
      while (i < line.size() && is_separator(line[i])) ++i;
      if (i >= line.size()) break;
      std::size_t j = i;
      while (j < line.size() && !is_separator(line[j])) ++j;
      const char* b = line.data() + i;
      const char* e = line.data() + j;
      if (*b == '+') ++b;  // from_chars rejects a leading '+'
      double v;
      const auto [p, ec] = std::from_chars(b, e, v);
      if (p != e || (ec != std::errc() && ec != std::errc::result_out_of_range))
        throw_input(fmt::format("{}:{}: '{}' is not a number", path, lineno, std::string_view(line.data() + i, j - i)));
      row.push_back(v);
      i = j;
    }
    if (row.empty()) continue;  // blank or comment line
    if (t.ncols == 0) {
      t.ncols = static_cast<int>(row.size());
      t.cols.resize(t.ncols);
    } else if (static_cast<int>(row.size()) != t.ncols) {
      throw_input(fmt::format("{}:{}: {} columns, but the first data line has {}", path, lineno,
                              row.size(), t.ncols));
    }
    for (int c = 0; c < t.ncols; ++c) t.cols[c].push_back(row[c]);
    t.line_of_row.push_back(lineno);
    ++t.rows;
  }
  if (t.rows == 0) throw_input(fmt::format("{}: no data lines (only blanks or comments)", path));
  return t;
}

}  // namespace twobody
