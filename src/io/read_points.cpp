#include <fmt/format.h>

#include <charconv>
#include <cmath>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "twobody/detail/io/raw_table.hpp"
#include "twobody/error.hpp"
#include "twobody/io.hpp"

namespace twobody {

namespace {

FileFormat detect(const std::string& path) {
  const auto ext = std::filesystem::path(path).extension().string();
  if (ext == ".npy") return FileFormat::Npy;
  if (ext == ".ff") return FileFormat::FastFood;
  return FileFormat::Text;
}

}  // namespace

std::vector<int> parse_column_list(const std::string& spec) {
  std::vector<int> cols;
  std::stringstream ss(spec);
  std::string item;
  while (std::getline(ss, item, ',')) {
    int c = 0;
    const auto [p, ec] = std::from_chars(item.data(), item.data() + item.size(), c);
    if (ec != std::errc() || p != item.data() + item.size() || c < 1)
      throw_config(fmt::format("bad column list '{}': expected 1-based numbers such as 1,2,3", spec));
    cols.push_back(c);
  }
  if (cols.empty()) throw_config("the column list is empty");
  return cols;
}

std::string read_whole_file(const std::string& path) {
  std::error_code ec;
  if (!std::filesystem::exists(path, ec)) throw_input(fmt::format("{}: no such file", path));
  if (std::filesystem::is_directory(path, ec)) throw_input(fmt::format("{}: is a directory", path));
  std::ifstream in(path, std::ios::binary);
  if (!in) throw_input(fmt::format("{}: cannot open", path));
  std::string s((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  if (s.empty()) throw_input(fmt::format("{}: the file is empty", path));
  return s;
}

PointSet read_points(const std::string& path, const ReadOptions& opt) {
  const FileFormat fmt_ = opt.format == FileFormat::Auto ? detect(path) : opt.format;
  RawTable t;
  switch (fmt_) {
    case FileFormat::Npy: t = read_npy(path); break;
    case FileFormat::FastFood: t = read_fast_food(path); break;
    default: t = read_text(path); break;
  }
  if (t.rows == 0) throw_input(fmt::format("{}: the file holds no points", path));
  std::vector<int> cols = opt.columns;
  if (cols.empty()) {
    for (int c = 1; c <= t.ncols; ++c)
      if (c != opt.weight_column && c != opt.region_column) cols.push_back(c);
  }
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
                             "--columns)", path, cols.size(), kMaxDim));
  PointSet p(static_cast<int>(cols.size()), t.rows);
  for (std::size_t d = 0; d < cols.size(); ++d) {
    const auto& src = t.column(cols[d]);
    std::copy(src.begin(), src.end(), p.coord(static_cast<int>(d)).begin());
  }
  if (opt.weight_column > 0) p.set_weights(t.column(opt.weight_column));
  // Non-finite values are reported with the line they came from.
  for (std::size_t d = 0; d < cols.size(); ++d) t.check_finite(cols[d], path);
  if (opt.weight_column > 0) t.check_finite(opt.weight_column, path);
  if (opt.region_column > 0) {
    const auto& v = t.column(opt.region_column);
    std::vector<std::int32_t> labels(v.size());
    for (std::size_t r = 0; r < v.size(); ++r) {
      if (!(v[r] >= 0 && v[r] <= 2147483647.0 && v[r] == std::floor(v[r])))
        throw_input(fmt::format("{}: region label '{}' in column {} is not a non-negative integer",
                                t.where(r, path), v[r], opt.region_column));
      labels[r] = static_cast<std::int32_t>(v[r]);
    }
    p.set_regions(std::move(labels));
  }
  return p;
}

}  // namespace twobody
