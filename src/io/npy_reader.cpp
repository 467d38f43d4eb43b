// NumPy .npy: magic, version, a Python-literal header dict, then the raw array.
#include <fmt/format.h>

#include <cstdint>
#include <cstring>
#include <regex>
#include <string_view>

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
  const std::string header(s.substr(hstart, hlen));
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
