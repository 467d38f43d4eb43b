#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <cctype>
#include <charconv>
#include <cmath>
#include <cstdint>
#include <filesystem>

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "twobody/detail/io/raw_table.hpp"
#include "twobody/detail/io/vector_files.hpp"
#include "twobody/error.hpp"
#include "twobody/io.hpp"

namespace twobody {

std::vector<int> choose_columns(const RawTable& t, const ReadOptions& opt, const std::string& path,
                                std::vector<int>& unused) {
  if (!opt.columns.empty() && !opt.column_names.empty())
    throw_config("give the coordinate columns by number or by name, not both");
  std::vector<int> cols = opt.columns;
  for (const std::string& name : opt.column_names) {
    for (const std::string& n : t.not_numeric)
      if (n.rfind(name + " (", 0) == 0) throw_input(fmt::format("{}: column {} is not numeric", path, n));
    if (t.names.empty())
      throw_input(fmt::format("{}: column '{}' was asked for by name, but the file has no {}", path, name,
                              t.line_of_row.empty() ? "column names" : "header line of names"));
    const auto at = std::find(t.names.begin(), t.names.end(), name);
    if (at == t.names.end())
      throw_input(fmt::format("{}: no column named '{}' (the {} has: {})", path, name,
                              t.line_of_row.empty() ? "file" : "header", fmt::join(t.names, ", ")));
    cols.push_back(static_cast<int>(at - t.names.begin()) + 1);
  }
  if (!cols.empty()) return cols;
  for (int c = 1; c <= t.ncols; ++c) {
    if (c == opt.weight_column || c == opt.region_column) continue;
    if (std::find(opt.value_columns.begin(), opt.value_columns.end(), c) != opt.value_columns.end()) continue;
    if (opt.default_columns > 0 && static_cast<int>(cols.size()) == opt.default_columns) unused.push_back(c);
    else cols.push_back(c);
  }
  return cols;
}

namespace {
// A vector file's rows as a table's columns: the point readers take .fvecs and its kin too.
RawTable table_of(const VectorSet& v) {
  RawTable t;
  t.ncols = v.dim();
  t.rows = v.size();
  t.row_word = "row";
  t.cols.assign(static_cast<std::size_t>(v.dim()), std::vector<double>(v.size()));
  std::vector<double> row(static_cast<std::size_t>(v.dim()));
  for (std::size_t i = 0; i < v.size(); ++i) {
    v.row_f64(i, row.data());
    for (std::size_t c = 0; c < row.size(); ++c) t.cols[c][i] = row[c];
  }
  return t;
}

bool is_vector_format(FileFormat f) { return f == FileFormat::Fvecs || f == FileFormat::Bvecs || f == FileFormat::Ivecs; }

// The format of a file's own name (no ":part" after it).
FileFormat format_of_name(const std::string& name) {
  std::string lower = name;
  for (char& c : lower) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  const auto ends = [&](const char* ext) { return lower.ends_with(ext) && lower.size() > std::strlen(ext); };
  if (ends(".npy")) return FileFormat::Npy;
  if (ends(".ff")) return FileFormat::FastFood;
  if (ends(".npz")) return FileFormat::Npz;
  if (ends(".h5") || ends(".hdf5") || ends(".hdf")) return FileFormat::Hdf5;
  if (ends(".fits") || ends(".fit") || ends(".fits.gz") || ends(".fit.gz")) return FileFormat::Fits;
  if (ends(".fvecs")) return FileFormat::Fvecs;
  if (ends(".bvecs")) return FileFormat::Bvecs;
  if (ends(".ivecs")) return FileFormat::Ivecs;
  return FileFormat::Text;
}
}  // namespace

FilePart split_file_part(const std::string& spec) {
  struct stat st {};
  if (::stat(spec.c_str(), &st) == 0) return {spec, ""};
  for (std::size_t at = spec.find(':'); at != std::string::npos; at = spec.find(':', at + 1)) {
    const FileFormat f = format_of_name(spec.substr(0, at));
    if (f == FileFormat::Hdf5 || f == FileFormat::Fits) return {spec.substr(0, at), spec.substr(at + 1)};
  }
  return {spec, ""};
}

FileFormat format_of(const std::string& path) { return format_of_name(split_file_part(path).file); }
std::string file_of(const std::string& path) { return split_file_part(path).file; }

bool format_supported(FileFormat f) {
#ifdef TWOBODY_HAVE_HDF5
  const bool hdf5 = true;
#else
  const bool hdf5 = false;
#endif
#ifdef TWOBODY_HAVE_FITS
  const bool fits = true;
#else
  const bool fits = false;
#endif
  return f == FileFormat::Hdf5 ? hdf5 : f == FileFormat::Fits ? fits : true;
}

std::vector<int> parse_column_list(const std::string& spec) {
  std::vector<int> cols;
  std::string_view rest = spec;
  while (!rest.empty()) {  // comma-separated; a trailing comma ends the list
    const std::size_t comma = rest.find(',');
    const std::string_view item = rest.substr(0, comma);
    rest = comma == std::string_view::npos ? std::string_view() : rest.substr(comma + 1);
    int c = 0;
    const auto [p, ec] = std::from_chars(item.data(), item.data() + item.size(), c);
    if (ec != std::errc() || p != item.data() + item.size() || c < 1)
      throw_config(fmt::format("bad column list '{}': expected 1-based numbers such as 1,2,3", spec));
    cols.push_back(c);
  }
  if (cols.empty()) throw_config("the column list is empty");
  return cols;
}

int open_input(const std::string& path, struct stat& st) {
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) throw_input(fmt::format("{}: cannot open: {}", path, std::strerror(errno)));
  st = {};
  if (::fstat(fd, &st) != 0 || S_ISDIR(st.st_mode)) {
    const int err = errno;
    ::close(fd);
    if (S_ISDIR(st.st_mode)) throw_input(fmt::format("{}: is a directory", path));
    throw_input(fmt::format("{}: cannot read: {}", path, std::strerror(err)));
  }
  return fd;
}

std::string read_whole_file(const std::string& path) {
  // "-": standard input (text only: the format is not known from a name).
  const bool standard_input = path == "-";
  struct stat st {};
  if (standard_input) ::fstat(STDIN_FILENO, &st);
  const int fd = standard_input ? STDIN_FILENO : open_input(path, st);
  std::string s;
  if (S_ISREG(st.st_mode)) s.reserve(static_cast<std::size_t>(st.st_size));
  std::vector<char> buf(1 << 20);
  for (;;) {
    const ssize_t n = ::read(fd, buf.data(), buf.size());
    if (n == 0) break;
    if (n < 0) {
      if (errno == EINTR) continue;
      const int err = errno;
      if (!standard_input) ::close(fd);
      throw_input(fmt::format("{}: cannot read: {}", standard_input ? "standard input" : path, std::strerror(err)));
    }
    s.append(buf.data(), static_cast<std::size_t>(n));
  }
  if (!standard_input) ::close(fd);
  if (s.empty()) throw_input(fmt::format("{}: the file is empty", standard_input ? "standard input" : path));
  return s;
}

PointSet read_points(const std::string& path, const ReadOptions& opt) { return read_catalogue(path, opt).points; }

Catalogue read_catalogue(const std::string& path, const ReadOptions& opt) {
  const FileFormat fmt_ = opt.format == FileFormat::Auto ? format_of(path) : opt.format;
  RawTable t;
  const FilePart part = split_file_part(path);
  if (!part.inside.empty() && fmt_ != FileFormat::Hdf5 && fmt_ != FileFormat::Fits)
    throw_input(fmt::format("{}: cannot open: No such file or directory", path));
  switch (fmt_) {
    case FileFormat::Npy: t = read_npy(path); break;
    case FileFormat::FastFood: t = read_fast_food(path); break;
    case FileFormat::Hdf5: t = read_hdf5(part.file, part.inside); break;
    case FileFormat::Fits: t = read_fits(part.file, part.inside); break;
    case FileFormat::Npz:
      throw_input(fmt::format("{}: a .npz archive is not read as a catalogue: save the points as a .npy "
                              "(numpy.save) or an .h5", path));
    case FileFormat::Fvecs:
    case FileFormat::Bvecs:
    case FileFormat::Ivecs: t = table_of(read_vecs(path, fmt_)); break;
    case FileFormat::Auto:
    case FileFormat::Text: t = read_text(path); break;
  }
  if (t.rows == 0) throw_input(fmt::format("{}: the file holds no points", path));
  Catalogue out;
  const std::vector<int> cols = choose_columns(t, opt, path, out.unused_columns);
  for (int c : cols)
    if (c > t.ncols)
      throw_input(fmt::format("{}: column {} was asked for but the file has {} column(s)", path, c, t.ncols));
  if (opt.weight_column > t.ncols)
    throw_input(fmt::format("{}: weight column {} was asked for but the file has {} column(s)", path,
                            opt.weight_column, t.ncols));
  if (opt.region_column > t.ncols)
    throw_input(fmt::format("{}: region column {} was asked for but the file has {} column(s)", path,
                            opt.region_column, t.ncols));
  if (static_cast<int>(cols.size()) > kMaxDim)
    throw_config(fmt::format("{}: {} coordinate columns; at most {} are supported (select with "
                             "--columns){}", path, cols.size(), kMaxDim,
                             is_vector_format(fmt_) ? "; vectors of any dimension are read by read_vectors" : ""));
  // Every check first (a non-finite value reported with the line it came from), then the columns
  // move into the points: a column used once is never copied.
  for (int c : cols) t.check_finite(c, path);
  if (opt.weight_column > 0) t.check_finite(opt.weight_column, path);
  for (int c : opt.value_columns) {
    if (c < 1 || c > t.ncols)
      throw_input(fmt::format("{}: value column {} was asked for but the file has {} column(s)", path, c, t.ncols));
    if (std::find(cols.begin(), cols.end(), c) != cols.end())
      throw_config(fmt::format("{}: column {} is both a coordinate and a value column", path, c));
    if (c == opt.weight_column) throw_config(fmt::format("{}: column {} is both the weight and a value column", path, c));
    t.check_finite(c, path);
  }
  std::vector<std::int32_t> labels;
  if (opt.region_column > 0) {
    const auto& v = t.column(opt.region_column);
    labels.resize(v.size());
    for (std::size_t r = 0; r < v.size(); ++r) {
      if (!(v[r] >= 0 && v[r] <= 2147483647.0 && v[r] == std::floor(v[r])))
        throw_input(fmt::format("{}: region label '{}' in column {} is not a non-negative integer",
                                t.where(r, path), v[r], opt.region_column));
      labels[r] = static_cast<std::int32_t>(v[r]);
    }
  }
  std::vector<int> uses(static_cast<std::size_t>(t.ncols) + 1, 0);
  for (int c : cols) ++uses[c];
  if (opt.weight_column > 0) ++uses[opt.weight_column];
  for (int c : opt.value_columns) ++uses[c];
  const auto take = [&](int c) { return --uses[c] == 0 ? std::move(t.cols[c - 1]) : t.cols[c - 1]; };
  std::vector<std::vector<double>> coords;
  for (int c : cols) coords.push_back(take(c));
  out.points = PointSet::from_columns(std::move(coords));
  if (opt.weight_column > 0) out.points.set_weights(take(opt.weight_column));
  if (opt.region_column > 0) out.points.set_regions(std::move(labels));
  for (int c : opt.value_columns) out.values.push_back(take(c));
  out.names = t.names;
  return out;
}

}  // namespace twobody
