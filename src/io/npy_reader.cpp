// NumPy .npy: magic, version, a Python-literal header dict, then the raw array.
#include <fmt/format.h>

#include <cstdint>
#include <cstring>
#include <regex>

#include "twobody/detail/io/raw_table.hpp"

namespace twobody {

RawTable read_npy(const std::string& path) {
  const std::string s = read_whole_file(path);
  if (s.size() < 10 || std::memcmp(s.data(), "\x93NUMPY", 6) != 0)
    throw_input(fmt::format("{}: not a NumPy .npy file (bad magic)", path));
  const int major = static_cast<unsigned char>(s[6]);
  std::size_t hlen = 0, hstart = 0;
  if (major == 1) {
    hlen = static_cast<unsigned char>(s[8]) | (static_cast<unsigned char>(s[9]) << 8);
    hstart = 10;
  } else {
    if (s.size() < 12) throw_input(fmt::format("{}: truncated .npy header", path));
    std::uint32_t h;
    std::memcpy(&h, s.data() + 8, 4);
    hlen = h;
    hstart = 12;
  }
  if (hstart + hlen > s.size()) throw_input(fmt::format("{}: truncated .npy header", path));
  const std::string header = s.substr(hstart, hlen);
  std::smatch m;
  if (!std::regex_search(header, m, std::regex(R"('descr'\s*:\s*'([^']*)')")))
    throw_input(fmt::format("{}: the .npy header has no 'descr' (a structured or object array?)", path));
  const std::string descr = m[1];
  std::smatch d;
  const bool simple = std::regex_match(descr, d, std::regex(R"(([<>|=]?)([a-zA-Z])(\d+))"));
  const std::string endian = simple ? d[1].str() : "", kind = simple ? d[2].str() : "";
  const int width = simple && d[3].length() < 4 ? std::stoi(d[3]) : 0;
  const bool readable = (kind == "f" || kind == "i") && (width == 4 || width == 8);
  if (!readable) {
    static const char* names[][2] = {{"b", "bool"}, {"u", "unsigned integer"}, {"c", "complex"}, {"U", "unicode text"},
                                     {"S", "bytes"}, {"O", "Python objects"}, {"M", "datetime"}, {"m", "timedelta"},
                                     {"V", "raw bytes"}, {"f", "float"}, {"i", "integer"}};
    std::string what = "a structured dtype";
    for (const auto& n : names)
      if (kind == n[0]) what = fmt::format("{} of {} bytes", n[1], width);
    throw_input(fmt::format("{}: .npy dtype '{}' ({}) is not supported: float64, float32, int64 or int32", path, descr,
                            what));
  }
  if (endian == ">") throw_input(fmt::format("{}: .npy dtype '{}' is big-endian: not supported", path, descr));
  const bool fortran = std::regex_search(header, std::regex(R"('fortran_order'\s*:\s*True)"));
  if (!std::regex_search(header, m, std::regex(R"('shape'\s*:\s*\(\s*(\d+)\s*,?\s*(\d*)\s*,?\s*\))")))
    throw_input(fmt::format("{}: .npy arrays must be 1-D or 2-D", path));
  if (m[1].length() > 15 || m[2].length() > 15)
    throw_input(fmt::format("{}: the .npy shape ({}, {}) is beyond any file", path, m[1].str(), m[2].str()));
  const std::size_t rows = std::stoull(m[1]);
  const std::size_t ncols = m[2].length() ? std::stoull(m[2]) : 1;
  const std::size_t data = hstart + hlen;
  if (rows == 0 || ncols == 0) throw_input(fmt::format("{}: the array is empty", path));
  // (Each factor below 10^15: the product of the three cannot wrap 2^64 unless it exceeds the file.)
  if (ncols > (s.size() - data) || rows > (s.size() - data) || s.size() - data < rows * ncols * static_cast<std::size_t>(width))
    throw_input(fmt::format("{}: the file is shorter than its {} x {} array", path, rows, ncols));

  RawTable t;
  t.ncols = static_cast<int>(ncols);
  t.rows = rows;
  t.row_word = "row";
  t.cols.assign(ncols, std::vector<double>(rows));
  const char* p = s.data() + data;
  for (std::size_t r = 0; r < rows; ++r)
    for (std::size_t c = 0; c < ncols; ++c) {
      const std::size_t idx = fortran ? c * rows + r : r * ncols + c;
      double v;
      if (kind == "f" && width == 8) { std::memcpy(&v, p + 8 * idx, 8); }
      else if (kind == "f") { float f; std::memcpy(&f, p + 4 * idx, 4); v = f; }
      else if (width == 8) { std::int64_t i; std::memcpy(&i, p + 8 * idx, 8); v = static_cast<double>(i); }
      else { std::int32_t i; std::memcpy(&i, p + 4 * idx, 4); v = i; }
      t.cols[c][r] = v;
    }
  return t;
}

}  // namespace twobody
