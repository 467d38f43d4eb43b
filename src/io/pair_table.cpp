// Tables of coordinates and named columns for pair expressions (twobody/pair_table.hpp).
#include "twobody/pair_table.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>

#include "twobody/detail/io/raw_table.hpp"
#include "twobody/error.hpp"

namespace twobody {

int Schema::find(std::string_view name) const {
  const auto it = std::find(names.begin(), names.end(), name);
  return it == names.end() ? -1 : static_cast<int>(it - names.begin());
}

PairTable::PairTable(VectorSet coordinates, std::vector<std::string> names, std::vector<std::vector<double>> columns)
    : coordinates_(std::move(coordinates)), columns_(std::move(columns)) {
  if (names.size() != columns_.size())
    throw_config(fmt::format("a table of {} column names and {} columns", names.size(), columns_.size()));
  schema_.dim = coordinates_.dim();
  for (std::size_t k = 0; k < columns_.size(); ++k) {
    const auto& c = columns_[k];
    if (c.size() != coordinates_.size())
      throw_input(fmt::format("column '{}' has {} values; the table has {} points", names[k], c.size(), coordinates_.size()));
    bool exact = true;
    for (std::size_t i = 0; i < c.size(); ++i) {
      if (!std::isfinite(c[i])) throw_input(fmt::format("column '{}': point {} has a non-finite value ({})", names[k], i + 1, c[i]));
      exact = exact && static_cast<double>(static_cast<float>(c[i])) == c[i];
    }
    if (std::find(names.begin(), names.begin() + static_cast<std::ptrdiff_t>(k), names[k]) != names.begin() + static_cast<std::ptrdiff_t>(k))
      throw_input(fmt::format("two columns are named '{}'", names[k]));
    schema_.exact_in_float32.push_back(exact);
  }
  schema_.names = std::move(names);
}

PairTable PairTable::from_points(const PointSet& p) {
  std::vector<std::string> names;
  std::vector<std::vector<double>> cols;
  if (p.has_weights()) {
    names.emplace_back("w");
    cols.emplace_back(p.weights().begin(), p.weights().end());
  }
  return PairTable(VectorSet::from_points(p), std::move(names), std::move(cols));
}

namespace {

PairTable table_of(const RawTable& t, const ReadOptions& opt, const std::string& path) {
  if (t.rows == 0) throw_input(fmt::format("{}: the file holds no rows", path));
  std::vector<int> unused;
  std::vector<int> coords = choose_columns(t, opt, path, unused);
  for (int c : coords)
    if (c < 1 || c > t.ncols) throw_config(fmt::format("{}: column {} is beyond the file's {} columns", path, c, t.ncols));
  const std::size_t n = t.rows, dim = coords.size();
  for (int c : coords) t.check_finite(c, path);
  std::vector<double> rows(n * dim);
  for (std::size_t i = 0; i < n; ++i)
    for (std::size_t k = 0; k < dim; ++k) rows[i * dim + k] = t.column(coords[k])[i];
  std::vector<std::string> names;
  std::vector<std::vector<double>> cols;
  for (std::size_t c = 0; c < t.names.size() && c < t.cols.size(); ++c) {
    t.check_finite(static_cast<int>(c) + 1, path);
    names.push_back(t.names[c]);
    cols.push_back(t.cols[c]);
  }
  return PairTable(VectorSet::from_rows(std::move(rows), n, static_cast<int>(dim)), std::move(names), std::move(cols));
}

}  // namespace

PairTable read_table(const std::string& path, const ReadOptions& opt) {
  const FileFormat f = opt.format == FileFormat::Auto ? format_of(path) : opt.format;
  const FilePart part = split_file_part(path);
  switch (f) {
    case FileFormat::Auto:
    case FileFormat::Text: return table_of(read_text(path), opt, path);
    case FileFormat::FastFood: return table_of(read_fast_food(path), opt, path);
    case FileFormat::Fits: return table_of(read_fits(part.file, part.inside), opt, path);
    case FileFormat::Hdf5: return table_of(read_hdf5(part.file, part.inside), opt, path);
    default: return PairTable(read_vectors(path, opt), {}, {});
  }
}

}  // namespace twobody
