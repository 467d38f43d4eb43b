#include <fmt/format.h>
#include <fmt/ranges.h>

#include <charconv>
#include <cmath>
#include <string_view>

#include "twobody/detail/io/raw_table.hpp"

namespace twobody {

namespace {

bool is_blank(char c) { return c == ' ' || c == '\t' || c == '\r'; }
bool is_delimiter(char c) { return c == ',' || c == ';'; }

// A shown token: printable as is, else its bytes in hex (a NUL or a stray control byte).
std::string shown(std::string_view token) {
  for (char c : token)
    if (static_cast<unsigned char>(c) < 0x20)
      return fmt::format("{} (bytes {:02x})", std::string(token.size(), '?'),
                         fmt::join(std::vector<unsigned char>(token.begin(), token.end()), " "));
  return std::string(token);
}

// The fields of a line: runs of blanks separate, and so does one ',' or ';' with blanks around it;
// two delimiters with nothing between them, or one at either end, mark an empty field (an error,
// not a merged separator: "1,,3" must not read as two columns).
struct Field {
  std::string_view text;  // empty: an empty field
  std::size_t column;     // 1-based
};
std::vector<Field> split_fields(std::string_view line) {
  std::vector<Field> fields;
  std::size_t i = 0;
  bool after_delimiter = false, any = false;
  while (true) {
    while (i < line.size() && is_blank(line[i])) ++i;
    if (i >= line.size()) {
      if (after_delimiter) fields.push_back({{}, fields.size() + 1});
      break;
    }
    if (is_delimiter(line[i])) {
      if (after_delimiter || !any) fields.push_back({{}, fields.size() + 1});
      after_delimiter = true;
      any = true;
      ++i;
      continue;
    }
    std::size_t j = i;
    while (j < line.size() && !is_blank(line[j]) && !is_delimiter(line[j])) ++j;
    fields.push_back({line.substr(i, j - i), fields.size() + 1});
    after_delimiter = false;
    any = true;
    i = j;
  }
  return fields;
}

// A number, or nullopt when the token is not one. Overflow (1e400) is an error of its own; a
// value below the smallest subnormal (1e-400) reads as zero of its sign, as strtod gives.
std::optional<double> parse_number(std::string_view token, const std::string& where, std::size_t column) {
  const char* b = token.data();
  const char* e = b + token.size();
  if (b < e && *b == '+') ++b;  // from_chars rejects a leading '+'
  double v = 0;
  const auto [p, ec] = std::from_chars(b, e, v);
  if (p != e || b == e) return std::nullopt;
  if (ec == std::errc::result_out_of_range) {
    // from_chars leaves v untouched: tell overflow from underflow by the exponent's sign.
    const auto exp = token.find_first_of("eE");
    const bool tiny = exp != std::string_view::npos && exp + 1 < token.size() && token[exp + 1] == '-';
    if (!tiny)
      throw_input(fmt::format("{}: column {}: '{}' is beyond float64's range (about 1.8e308)", where, column, token));
    return token.front() == '-' ? -0.0 : 0.0;
  }
  return v;
}

}  // namespace

RawTable read_text(const std::string& path) {
  std::string text = read_whole_file(path);
  RawTable t;
  std::size_t pos = 0;
  if (text.rfind("\xEF\xBB\xBF", 0) == 0) pos = 3;  // a UTF-8 byte-order mark (spreadsheets write one)
  if (text.size() >= 2 && (text.rfind("\xFF\xFE", 0) == 0 || text.rfind("\xFE\xFF", 0) == 0))
    throw_input(fmt::format("{}: the file is UTF-16 text (a byte-order mark FF FE or FE FF): save it as UTF-8 or ASCII",
                            path));
  std::vector<double> row;
  std::size_t lineno = 0;
  bool header_possible = true;  // the first line with fields may be a header of names
  while (pos < text.size()) {
    std::size_t end = text.find('\n', pos);
    if (end == std::string::npos) end = text.size();
    std::string_view line(text.data() + pos, end - pos);
    pos = end + 1;
    ++lineno;
    if (const auto h = line.find('#'); h != std::string_view::npos) line = line.substr(0, h);
    if (const auto z = line.find('\0'); z != std::string_view::npos)
      throw_input(fmt::format("{}:{}: column {}: a NUL byte (a binary file? .npy and .ff files need their extension)",
                              path, lineno, split_fields(line.substr(0, z)).size() + 1));
    const std::vector<Field> fields = split_fields(line);
    if (fields.empty()) continue;  // blank or comment line
    const std::string where = fmt::format("{}:{}", path, lineno);
    row.clear();
    bool names = header_possible;
    for (const Field& f : fields) {
      if (f.text.empty()) throw_input(fmt::format("{}: column {} is empty", where, f.column));
      const auto v = parse_number(f.text, where, f.column);
      if (v) {
        names = false;
        row.push_back(*v);
      } else if (!header_possible) {
        throw_input(fmt::format("{}: column {}: '{}' is not a number", where, f.column, shown(f.text)));
      }
    }
    if (header_possible && !names && row.size() != fields.size()) {
      // Numbers and words mixed on the first line: neither a header nor a data line.
      for (const Field& f : fields)
        if (!parse_number(f.text, where, f.column))
          throw_input(fmt::format("{}: column {}: '{}' is not a number", where, f.column, shown(f.text)));
    }
    header_possible = false;
    if (names) {
      for (const Field& f : fields) t.names.emplace_back(f.text);
      t.ncols = static_cast<int>(fields.size());
      t.cols.resize(t.ncols);
      continue;
    }
    if (t.cols.empty()) {
      t.ncols = static_cast<int>(row.size());
      t.cols.resize(t.ncols);
    } else if (static_cast<int>(row.size()) != t.ncols) {
      throw_input(fmt::format("{}: {} columns, but the {} has {}", where, row.size(),
                              t.names.empty() ? "first data line" : "header", t.ncols));
    }
    for (int c = 0; c < t.ncols; ++c) t.cols[c].push_back(row[c]);
    t.line_of_row.push_back(lineno);
    ++t.rows;
  }
  if (t.rows == 0) throw_input(fmt::format("{}: no data lines (only blanks, comments or a header)", path));
  return t;
}

}  // namespace twobody
