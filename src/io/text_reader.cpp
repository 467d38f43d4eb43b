#include <fmt/format.h>
#include <fmt/ranges.h>

#include <charconv>
#include <cmath>
#include <string_view>
#include <algorithm>

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

// One line's fields (comments stripped), with the NUL check; empty for a blank or comment line.
std::vector<Field> line_fields(std::string_view line, const std::string& path, std::size_t lineno) {
  if (const auto h = line.find('#'); h != std::string_view::npos) line = line.substr(0, h);
  if (const auto z = line.find('\0'); z != std::string_view::npos)
    throw_input(fmt::format("{}:{}: column {}: a NUL byte (a binary file? .npy and .ff files need their extension)",
                            path, lineno, split_fields(line.substr(0, z)).size() + 1));
  return split_fields(line);
}

// The data lines of `text` (whole lines, the first numbered `lineno`), `ncols` numbers each (as
// `reference`, the header or the first data line, has), row after row into `values`; the first
// error is kept, and parsing stops there.
struct ParsedChunk {
  std::vector<double> values;
  std::vector<std::size_t> lines;
  std::string error;  // empty: none
};
void parse_chunk(std::string_view text, std::size_t lineno, int ncols, const char* reference, const std::string& path,
                 ParsedChunk& out) {
  std::size_t pos = 0;
  try {
    for (; pos < text.size(); ++lineno) {
      std::size_t end = text.find('\n', pos);
      if (end == std::string_view::npos) end = text.size();
      const std::vector<Field> fields = line_fields(text.substr(pos, end - pos), path, lineno);
      pos = end + 1;
      if (fields.empty()) continue;
      const std::string where = fmt::format("{}:{}", path, lineno);
      for (const Field& f : fields) {
        if (f.text.empty()) throw_input(fmt::format("{}: column {} is empty", where, f.column));
        const auto v = parse_number(f.text, where, f.column);
        if (!v) throw_input(fmt::format("{}: column {}: '{}' is not a number", where, f.column, shown(f.text)));
        out.values.push_back(*v);
      }
      if (static_cast<int>(fields.size()) != ncols)
        throw_input(fmt::format("{}: {} columns, but the {} has {}", where, fields.size(), reference, ncols));
      out.lines.push_back(lineno);
    }
  } catch (const Error& e) {
    out.error = e.what();
  }
}

}  // namespace

RawTable read_text(const std::string& path) {
  const std::string text = read_whole_file(path);
  RawTable t;
  std::size_t pos = 0;
  if (text.rfind("\xEF\xBB\xBF", 0) == 0) pos = 3;  // a UTF-8 byte-order mark (spreadsheets write one)
  if (text.size() >= 2 && (text.rfind("\xFF\xFE", 0) == 0 || text.rfind("\xFE\xFF", 0) == 0))
    throw_input(fmt::format("{}: the file is UTF-16 text (a byte-order mark FF FE or FE FF): save it as UTF-8 or ASCII",
                            path));
  // The first line with fields: a header of names (all words), or the first data line, which sets
  // the number of columns.
  std::size_t lineno = 1;
  std::size_t data_begin = text.size(), data_line = 0;
  while (pos < text.size()) {
    std::size_t end = text.find('\n', pos);
    if (end == std::string::npos) end = text.size();
    const std::vector<Field> fields = line_fields(std::string_view(text).substr(pos, end - pos), path, lineno);
    if (!fields.empty()) {
      const std::string where = fmt::format("{}:{}", path, lineno);
      std::size_t numbers = 0;
      for (const Field& f : fields) {
        if (f.text.empty()) throw_input(fmt::format("{}: column {} is empty", where, f.column));
        numbers += parse_number(f.text, where, f.column).has_value();
      }
      t.ncols = static_cast<int>(fields.size());
      if (numbers == 0) {  // a header
        for (const Field& f : fields) t.names.emplace_back(f.text);
        data_begin = end + 1;
        data_line = lineno + 1;
      } else {
        if (numbers != fields.size())  // numbers and words: neither a header nor a data line
          for (const Field& f : fields)
            if (!parse_number(f.text, where, f.column))
              throw_input(fmt::format("{}: column {}: '{}' is not a number", where, f.column, shown(f.text)));
        data_begin = pos;
        data_line = lineno;
      }
      break;
    }
    pos = end + 1;
    ++lineno;
  }
  if (t.ncols == 0 || data_begin >= text.size())
    throw_input(fmt::format("{}: no data lines (only blanks, comments or a header)", path));

  // The data in chunks of whole lines, parsed in parallel; each chunk's first line number from
  // the newlines before it.
  const std::string_view data = std::string_view(text).substr(data_begin);
  const std::size_t target = std::size_t(1) << 22;  // ~4 MB a chunk
  std::vector<std::size_t> starts{0};
  while (starts.back() < data.size()) {
    std::size_t next = std::min(data.size(), starts.back() + target);
    if (next < data.size()) {
      const std::size_t nl = data.find('\n', next);
      next = nl == std::string_view::npos ? data.size() : nl + 1;
    }
    starts.push_back(next);
  }
  const std::ptrdiff_t nchunks = static_cast<std::ptrdiff_t>(starts.size()) - 1;
  std::vector<std::size_t> newlines(static_cast<std::size_t>(nchunks) + 1, 0);
  std::vector<ParsedChunk> chunks(static_cast<std::size_t>(nchunks));
#pragma omp parallel for schedule(dynamic, 1) if (nchunks > 1)
  for (std::ptrdiff_t c = 0; c < nchunks; ++c) {
    const auto piece = data.substr(starts[c], starts[c + 1] - starts[c]);
    newlines[static_cast<std::size_t>(c) + 1] = static_cast<std::size_t>(std::count(piece.begin(), piece.end(), '\n'));
  }
  for (std::ptrdiff_t c = 0; c < nchunks; ++c) newlines[c + 1] += newlines[c];
#pragma omp parallel for schedule(dynamic, 1) if (nchunks > 1)
  for (std::ptrdiff_t c = 0; c < nchunks; ++c)
    parse_chunk(data.substr(starts[c], starts[c + 1] - starts[c]), data_line + newlines[c], t.ncols,
                t.names.empty() ? "first data line" : "header", path, chunks[static_cast<std::size_t>(c)]);
  std::size_t rows = 0;
  for (const ParsedChunk& c : chunks) {
    if (!c.error.empty()) throw_input(c.error);  // the chunks in file order: the earliest error
    rows += c.lines.size();
  }
  if (rows == 0) throw_input(fmt::format("{}: no data lines (only blanks, comments or a header)", path));
  t.rows = rows;
  t.cols.assign(static_cast<std::size_t>(t.ncols), std::vector<double>(rows));
  t.line_of_row.resize(rows);
  std::vector<std::size_t> first_row(chunks.size() + 1, 0);
  for (std::size_t c = 0; c < chunks.size(); ++c) first_row[c + 1] = first_row[c] + chunks[c].lines.size();
#pragma omp parallel for schedule(dynamic, 1) if (nchunks > 1)
  for (std::ptrdiff_t c = 0; c < nchunks; ++c) {
    const ParsedChunk& k = chunks[static_cast<std::size_t>(c)];
    const std::size_t r0 = first_row[static_cast<std::size_t>(c)];
    for (std::size_t r = 0; r < k.lines.size(); ++r) {
      t.line_of_row[r0 + r] = k.lines[r];
      for (int j = 0; j < t.ncols; ++j) t.cols[static_cast<std::size_t>(j)][r0 + r] = k.values[r * t.ncols + j];
    }
  }
  return t;
}

}  // namespace twobody
