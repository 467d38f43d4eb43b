// read_vectors: each format's rows as a VectorSet (element type kept where the format has one),
// then the columns ReadOptions asks for, then every value checked finite.
#include <fmt/format.h>

#include <algorithm>
#include <climits>
#include <cstdint>
#include <cstring>
#include <type_traits>
#include <variant>
#include <vector>

#include "twobody/detail/io/mapped_file.hpp"
#include "twobody/detail/io/npy_header.hpp"
#include "twobody/detail/io/vector_files.hpp"

namespace twobody {

namespace {

constexpr std::size_t kCopyChunk = std::size_t{1} << 20;  // values a thread copies at a time

// The array's values as rows of Out: C order copied straight (a memcpy per chunk, chunks in
// parallel) when the types agree, otherwise converted value by value (Fortran order transposed).
template <class In, class Out>
std::vector<Out> rows_of(const NpyArray& a) {
  const std::size_t rows = a.rows, cols = a.cols, total = rows * cols;
  std::vector<Out> out(total);
  if constexpr (std::is_same_v<In, Out>) {
    if (!a.fortran) {
      const std::ptrdiff_t chunks = static_cast<std::ptrdiff_t>((total + kCopyChunk - 1) / kCopyChunk);
#pragma omp parallel for schedule(static) if (chunks > 1)
      for (std::ptrdiff_t c = 0; c < chunks; ++c) {
        const std::size_t first = static_cast<std::size_t>(c) * kCopyChunk, n = std::min(kCopyChunk, total - first);
        std::memcpy(out.data() + first, a.data + first * sizeof(In), n * sizeof(In));
      }
      return out;
    }
  }
#pragma omp parallel for schedule(static) if (total > 100000)
  for (std::ptrdiff_t r = 0; r < static_cast<std::ptrdiff_t>(rows); ++r)
    for (std::size_t c = 0; c < cols; ++c) {
      const std::size_t i = static_cast<std::size_t>(r);
      In v;
      std::memcpy(&v, a.data + sizeof(In) * (a.fortran ? c * rows + i : i * cols + c), sizeof(In));
      out[i * cols + c] = static_cast<Out>(v);
    }
  return out;
}

// int64 values beyond 2^53 in magnitude would round in float64: refused, with the first of them.
void check_exact_in_float64(const NpyArray& a, const std::string& path) {
  constexpr std::int64_t kExact = std::int64_t{1} << 53;
  const auto at = [&](std::size_t r, std::size_t c) {
    std::int64_t v;
    std::memcpy(&v, a.data + 8 * (a.fortran ? c * a.rows + r : r * a.cols + c), 8);
    return v;
  };
  const auto beyond = [&](std::size_t r, std::size_t c) { return at(r, c) > kExact || at(r, c) < -kExact; };
  const std::size_t r = first_row_where(a.rows, [&](std::size_t i) {
    for (std::size_t c = 0; c < a.cols; ++c)
      if (beyond(i, c)) return true;
    return false;
  });
  if (r == a.rows) return;
  std::size_t c = 0;
  while (!beyond(r, c)) ++c;
  throw_input(fmt::format("{}: row {}, column {}: {} is beyond 2^53 in magnitude, where float64 (the vectors' type "
                          "for integers) would round it",
                          path, r + 1, c + 1, at(r, c)));
}

VectorSet read_npy_vectors(const std::string& path) {
  const MappedFile file(path);
  const NpyArray a =
      parse_npy(file.view(), path, {"f2", "f4", "f8", "i4", "i8"}, "float16, float32, float64, int32 or int64");
  if (a.cols > static_cast<std::size_t>(INT_MAX))
    throw_input(fmt::format("{}: {} columns is beyond any vector", path, a.cols));
  const int dim = static_cast<int>(a.cols);
  if (a.kind == 'f' && a.width == 2) return VectorSet::from_half_bits(rows_of<std::uint16_t, std::uint16_t>(a), a.rows, dim);
  if (a.kind == 'f' && a.width == 4) return VectorSet::from_rows(rows_of<float, float>(a), a.rows, dim);
  if (a.kind == 'f') return VectorSet::from_rows(rows_of<double, double>(a), a.rows, dim);
  if (a.width == 4) return VectorSet::from_rows(rows_of<std::int32_t, double>(a), a.rows, dim);
  check_exact_in_float64(a, path);
  return VectorSet::from_rows(rows_of<std::int64_t, double>(a), a.rows, dim);
}

void check_within(const std::vector<int>& cols, int ncols, const std::string& path) {
  if (cols.empty())
    throw_config(fmt::format("{}: no columns are left for the vectors (each is a weight, region or value column)", path));
  for (int c : cols)
    if (c > ncols) throw_input(fmt::format("{}: column {} was asked for but the file has {} column(s)", path, c, ncols));
}

// A table's chosen columns as float64 rows; non-finite values reported by the table, which knows
// a text file's lines.
VectorSet vectors_of_table(const RawTable& t, const ReadOptions& opt, const std::string& path) {
  if (t.rows == 0) throw_input(fmt::format("{}: the file holds no vectors", path));
  std::vector<int> unused;
  const std::vector<int> cols = choose_columns(t, opt, path, unused);
  check_within(cols, t.ncols, path);
  for (int c : cols) t.check_finite(c, path);
  const std::size_t n = t.rows, dim = cols.size();
  std::vector<double> rows(n * dim);
#pragma omp parallel for schedule(static) if (n * dim > 100000)
  for (std::ptrdiff_t i = 0; i < static_cast<std::ptrdiff_t>(n); ++i)
    for (std::size_t k = 0; k < dim; ++k)
      rows[static_cast<std::size_t>(i) * dim + k] = t.column(cols[k])[static_cast<std::size_t>(i)];
  return VectorSet::from_rows(std::move(rows), n, static_cast<int>(dim));
}

template <class T>
std::vector<T> gather_columns(const VectorSet& v, const std::vector<int>& cols) {
  const std::size_t dim = cols.size();
  std::vector<T> out(v.size() * dim);
#pragma omp parallel for schedule(static) if (v.size() * dim > 100000)
  for (std::ptrdiff_t i = 0; i < static_cast<std::ptrdiff_t>(v.size()); ++i) {
    const T* row = static_cast<const T*>(v.row(static_cast<std::size_t>(i)));
    for (std::size_t k = 0; k < dim; ++k) out[static_cast<std::size_t>(i) * dim + k] = row[cols[k] - 1];
  }
  return out;
}

// The columns ReadOptions asks of a file without column names (a weight column only leaves the
// vectors, as in a table); the set itself when that is all of them, in order.
VectorSet select_columns(VectorSet v, const ReadOptions& opt, const std::string& path) {
  RawTable shape;
  shape.ncols = v.dim();
  std::vector<int> unused;
  const std::vector<int> cols = choose_columns(shape, opt, path, unused);
  check_within(cols, v.dim(), path);
  bool all = static_cast<int>(cols.size()) == v.dim();
  for (std::size_t k = 0; all && k < cols.size(); ++k) all = cols[k] == static_cast<int>(k) + 1;
  if (all) return v;
  const int dim = static_cast<int>(cols.size());
  switch (v.element()) {
    case Element::F16: return VectorSet::from_half_bits(gather_columns<std::uint16_t>(v, cols), v.size(), dim);
    case Element::F32: return VectorSet::from_rows(gather_columns<float>(v, cols), v.size(), dim);
    case Element::F64: break;
  }
  return VectorSet::from_rows(gather_columns<double>(v, cols), v.size(), dim);
}

}  // namespace

VectorSet read_vectors(const std::string& path, const ReadOptions& opt) {
  const FileFormat f = opt.format == FileFormat::Auto ? format_of(path) : opt.format;
  const FilePart part = split_file_part(path);
  if (!part.inside.empty() && f != FileFormat::Hdf5 && f != FileFormat::Fits)
    throw_input(fmt::format("{}: cannot open: No such file or directory", path));
  VectorSet v;
  switch (f) {
    case FileFormat::Fvecs:
    case FileFormat::Bvecs:
    case FileFormat::Ivecs: v = read_vecs(path, f); break;
    case FileFormat::Npy: v = read_npy_vectors(path); break;
    case FileFormat::Hdf5: {
      auto read = read_hdf5_vectors(part.file, part.inside);
      if (const RawTable* t = std::get_if<RawTable>(&read)) return vectors_of_table(*t, opt, path);
      v = std::move(std::get<VectorSet>(read));
      break;
    }
    case FileFormat::Npz:
      throw_input(fmt::format("{}: a .npz archive is not read as vectors: save the array as a .npy (numpy.save) or "
                              "an .h5", path));
    case FileFormat::FastFood: return vectors_of_table(read_fast_food(path), opt, path);
    case FileFormat::Fits: return vectors_of_table(read_fits(part.file, part.inside), opt, path);
    case FileFormat::Auto:
    case FileFormat::Text: return vectors_of_table(read_text(path), opt, path);
  }
  v = select_columns(std::move(v), opt, path);
  v.check_finite(path);
  return v;
}

}  // namespace twobody
