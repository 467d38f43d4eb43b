// NumPy .npy: magic, version, a Python-literal header dict, then the raw array.
#include "twobody/detail/io/npy_header.hpp"

#include <fmt/format.h>

#include <cctype>
#include <charconv>
#include <cstdint>
#include <cstring>
#include <optional>
#include <vector>

#include "twobody/error.hpp"

namespace twobody {

namespace {

// The header is a Python dict literal, e.g. {'descr': '<f8', 'fortran_order': False, 'shape': (10, 3), }.
// Parsed by hand: std::regex (which it used) needs std::locale's facets, and inside the Python
// module on the device machine (Python 3.12, libstdc++ 13) compiling one crashed; three fields need
// no regular expressions.
bool is_space(char c) { return c == ' ' || c == '\t' || c == '\n' || c == '\r'; }

std::string_view skip_spaces(std::string_view v) {
  while (!v.empty() && is_space(v.front())) v.remove_prefix(1);
  return v;
}

// What follows `'key':` in the header (spaces skipped), or nullopt when the key is absent.
std::optional<std::string_view> value_of(std::string_view header, std::string_view key) {
  const std::string quoted = fmt::format("'{}'", key);
  for (std::size_t at = header.find(quoted); at != std::string_view::npos; at = header.find(quoted, at + 1)) {
    std::string_view rest = skip_spaces(header.substr(at + quoted.size()));
    if (!rest.empty() && rest.front() == ':') return skip_spaces(rest.substr(1));
  }
  return std::nullopt;
}

// A quoted string at the front of `v` ('...'), or nullopt.
std::optional<std::string_view> quoted_string(std::string_view v) {
  if (v.empty() || v.front() != '\'') return std::nullopt;
  const std::size_t end = v.find('\'', 1);
  if (end == std::string_view::npos) return std::nullopt;
  return v.substr(1, end - 1);
}

bool is_digits(std::string_view v) {
  return !v.empty() && v.find_first_not_of("0123456789") == std::string_view::npos;
}

// Digits as a number (the caller has bounded their count, so no overflow).
std::size_t number_of(std::string_view digits) {
  std::size_t v = 0;
  std::from_chars(digits.data(), digits.data() + digits.size(), v);
  return v;
}

// The shape tuple at the front of `v`: its entries' digits ("(10, 3)" gives {"10", "3"}; "(10,)"
// gives {"10"}), or nullopt when it is not a tuple of non-negative integers.
std::optional<std::vector<std::string_view>> shape_tuple(std::string_view v) {
  if (v.empty() || v.front() != '(') return std::nullopt;
  const std::size_t close = v.find(')');
  if (close == std::string_view::npos) return std::nullopt;
  std::string_view inner = v.substr(1, close - 1);
  std::vector<std::string_view> dims;
  while (true) {
    inner = skip_spaces(inner);
    if (inner.empty()) break;
    const std::size_t comma = inner.find(',');
    std::string_view item = inner.substr(0, comma);
    while (!item.empty() && is_space(item.back())) item.remove_suffix(1);
    if (!is_digits(item)) return std::nullopt;
    dims.push_back(item);
    if (comma == std::string_view::npos) break;
    inner.remove_prefix(comma + 1);
  }
  return dims;
}

}  // namespace

NpyArray parse_npy(std::string_view s, const std::string& path, std::initializer_list<std::string_view> accepted,
                   std::string_view accepted_names) {
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
  const std::string_view header = s.substr(hstart, hlen);
  const auto descr_value = value_of(header, "descr");
  const auto descr_text = descr_value ? quoted_string(*descr_value) : std::nullopt;
  if (!descr_text)
    throw_input(fmt::format("{}: the .npy header has no 'descr' (a structured or object array?)", path));
  NpyArray a;
  a.descr = std::string(*descr_text);
  // A simple dtype: an optional byte order, a kind letter, the width in bytes ("<f8", "|i4").
  std::string_view rest = a.descr;
  char endian = 0;
  if (!rest.empty() && std::string_view("<>|=").find(rest.front()) != std::string_view::npos) {
    endian = rest.front();
    rest.remove_prefix(1);
  }
  const bool simple = rest.size() >= 2 && std::isalpha(static_cast<unsigned char>(rest.front())) && is_digits(rest.substr(1));
  a.kind = simple ? rest.front() : 0;
  a.width = simple && rest.size() - 1 < 4 ? static_cast<int>(number_of(rest.substr(1))) : 0;
  bool readable = false;
  for (std::string_view type : accepted)
    readable = readable || (simple && type.size() >= 2 && type.front() == a.kind && number_of(type.substr(1)) ==
                                                                                         static_cast<std::size_t>(a.width));
  if (!readable) {
    static const char* names[][2] = {{"b", "bool"}, {"u", "unsigned integer"}, {"c", "complex"}, {"U", "unicode text"},
                                     {"S", "bytes"}, {"O", "Python objects"}, {"M", "datetime"}, {"m", "timedelta"},
                                     {"V", "raw bytes"}, {"f", "float"}, {"i", "integer"}};
    std::string what = "a structured dtype";
    for (const auto& n : names)
      if (simple && a.kind == n[0][0]) what = fmt::format("{} of {} bytes", n[1], a.width);
    throw_input(fmt::format("{}: .npy dtype '{}' ({}) is not supported: {}", path, a.descr, what, accepted_names));
  }
  if (endian == '>') throw_input(fmt::format("{}: .npy dtype '{}' is big-endian: not supported", path, a.descr));
  const auto order = value_of(header, "fortran_order");
  a.fortran = order && order->substr(0, 4) == "True";
  const auto shape_value = value_of(header, "shape");
  const auto shape = shape_value ? shape_tuple(*shape_value) : std::nullopt;
  if (!shape || shape->empty() || shape->size() > 2)
    throw_input(fmt::format("{}: .npy arrays must be 1-D or 2-D", path));
  const std::string_view dim0 = (*shape)[0], dim1 = shape->size() > 1 ? (*shape)[1] : std::string_view();
  if (dim0.size() > 15 || dim1.size() > 15)
    throw_input(fmt::format("{}: the .npy shape ({}, {}) is beyond any file", path, dim0, dim1));
  a.rank = static_cast<int>(shape->size());
  a.rows = number_of(dim0);
  a.cols = dim1.empty() ? 1 : number_of(dim1);
  const std::size_t data = hstart + hlen;
  if (a.rows == 0 || a.cols == 0) throw_input(fmt::format("{}: the array is empty", path));
  // (Each factor below 10^15: the product of the three cannot wrap 2^64 unless it exceeds the file.)
  if (a.cols > (s.size() - data) || a.rows > (s.size() - data) ||
      s.size() - data < a.rows * a.cols * static_cast<std::size_t>(a.width))
    throw_input(fmt::format("{}: the file is shorter than its {} x {} array", path, a.rows, a.cols));
  a.data = s.data() + data;
  return a;
}

}  // namespace twobody
