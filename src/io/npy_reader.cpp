// NumPy .npy: magic, version, a Python-literal header dict, then the raw array.
#include <fmt/format.h>

#include <cctype>
#include <cstdint>
#include <cstring>
#include <optional>
#include <string_view>
#include <vector>

#include <sys/mman.h>
#include <unistd.h>

#include <cerrno>

#include "twobody/detail/io/raw_table.hpp"

namespace twobody {

namespace {

// The file mapped read-only (a .npy is read at the disk's speed, its array converted once, in
// parallel, into the columns: no copy of the file in memory).
class MappedFile {
 public:
  explicit MappedFile(const std::string& path) {
    struct stat st {};
    const int fd = open_input(path, st);
    size_ = static_cast<std::size_t>(st.st_size);
    if (size_ == 0) {
      ::close(fd);
      throw_input(fmt::format("{}: the file is empty", path));
    }
    void* m = ::mmap(nullptr, size_, PROT_READ, MAP_PRIVATE, fd, 0);
    ::close(fd);
    if (m == MAP_FAILED) throw_input(fmt::format("{}: cannot map: {}", path, std::strerror(errno)));
    data_ = static_cast<const char*>(m);
    ::madvise(m, size_, MADV_SEQUENTIAL);
  }
  MappedFile(const MappedFile&) = delete;
  MappedFile& operator=(const MappedFile&) = delete;
  ~MappedFile() { ::munmap(const_cast<char*>(data_), size_); }
  std::string_view view() const { return {data_, size_}; }

 private:
  const char* data_ = nullptr;
  std::size_t size_ = 0;
};

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

RawTable read_npy(const std::string& path) {
  const MappedFile file(path);
  const std::string_view s = file.view();
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
  const std::string descr(*descr_text);
  // A simple dtype: an optional byte order, a kind letter, the width in bytes ("<f8", "|i4").
  std::string_view rest = descr;
  std::string endian;
  if (!rest.empty() && std::string_view("<>|=").find(rest.front()) != std::string_view::npos) {
    endian = std::string(1, rest.front());
    rest.remove_prefix(1);
  }
  const bool simple = rest.size() >= 2 && std::isalpha(static_cast<unsigned char>(rest.front())) && is_digits(rest.substr(1));
  const std::string kind = simple ? std::string(1, rest.front()) : "";
  const int width = simple && rest.size() - 1 < 4 ? std::stoi(std::string(rest.substr(1))) : 0;
  if (!simple) endian.clear();
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
  const auto order = value_of(header, "fortran_order");
  const bool fortran = order && order->substr(0, 4) == "True";
  const auto shape_value = value_of(header, "shape");
  const auto shape = shape_value ? shape_tuple(*shape_value) : std::nullopt;
  if (!shape || shape->empty() || shape->size() > 2)
    throw_input(fmt::format("{}: .npy arrays must be 1-D or 2-D", path));
  const std::string_view dim0 = (*shape)[0], dim1 = shape->size() > 1 ? (*shape)[1] : std::string_view();
  if (dim0.size() > 15 || dim1.size() > 15)
    throw_input(fmt::format("{}: the .npy shape ({}, {}) is beyond any file", path, dim0, dim1));
  const std::size_t rows = std::stoull(std::string(dim0));
  const std::size_t ncols = dim1.empty() ? 1 : std::stoull(std::string(dim1));
  const std::size_t data = hstart + hlen;
  if (rows == 0 || ncols == 0) throw_input(fmt::format("{}: the array is empty", path));
  // (Each factor below 10^15: the product of the three cannot wrap 2^64 unless it exceeds the file.)
  if (ncols > (s.size() - data) || rows > (s.size() - data) || s.size() - data < rows * ncols * static_cast<std::size_t>(width))
    throw_input(fmt::format("{}: the file is shorter than its {} x {} array", path, rows, ncols));

  RawTable t;
  t.ncols = static_cast<int>(ncols);
  t.rows = rows;
  t.row_word = "row";
  // Each column zero-filled (and so first touched) by its own thread: for a 10^7-row file the fill
  // is most of the read, and std::vector has no uninitialised constructor.
  t.cols.resize(ncols);
#pragma omp parallel for schedule(dynamic, 1) if (rows > 100000)
  for (std::ptrdiff_t c = 0; c < static_cast<std::ptrdiff_t>(ncols); ++c) t.cols[static_cast<std::size_t>(c)].resize(rows);
  const char* p = s.data() + data;
  const auto convert = [&](auto tag) {
    using T = decltype(tag);
    const std::ptrdiff_t n = static_cast<std::ptrdiff_t>(rows);
#pragma omp parallel for schedule(static) if (rows > 100000)
    for (std::ptrdiff_t r = 0; r < n; ++r)
      for (std::size_t c = 0; c < ncols; ++c) {
        const std::size_t idx = fortran ? c * rows + static_cast<std::size_t>(r) : static_cast<std::size_t>(r) * ncols + c;
        T v;
        std::memcpy(&v, p + sizeof(T) * idx, sizeof(T));
        t.cols[c][static_cast<std::size_t>(r)] = static_cast<double>(v);
      }
  };
  if (kind == "f" && width == 8) convert(double{});
  else if (kind == "f") convert(float{});
  else if (width == 8) convert(std::int64_t{});
  else convert(std::int32_t{});
  return t;
}

}  // namespace twobody
