// The ANN corpora's vector files (.fvecs, .bvecs, .ivecs; SIFT, GIST, Deep1B): each row an int32
// dimension d, then d values, little-endian, with no header; every row has the first row's d.
#include <fmt/format.h>

#include <bit>
#include <cstdint>
#include <cstring>
#include <type_traits>
#include <vector>

#include "twobody/detail/io/mapped_file.hpp"
#include "twobody/detail/io/vector_files.hpp"

namespace twobody {

// (The files are little-endian and read by memcpy.)
static_assert(std::endian::native == std::endian::little, "the vector readers assume a little-endian host");

namespace {

std::int32_t dimension_at(const char* p) {
  std::int32_t d;
  std::memcpy(&d, p, 4);
  return d;
}

// Every row's d values converted from In to Out, rows in parallel (the file is mapped; each row's
// values are contiguous after its 4-byte dimension).
template <class In, class Out>
std::vector<Out> convert_rows(const char* data, std::size_t n, std::size_t d, std::size_t row_bytes) {
  std::vector<Out> out(n * d);
#pragma omp parallel for schedule(static) if (n * d > 100000)
  for (std::ptrdiff_t i = 0; i < static_cast<std::ptrdiff_t>(n); ++i) {
    const char* row = data + static_cast<std::size_t>(i) * row_bytes + 4;
    Out* to = out.data() + static_cast<std::size_t>(i) * d;
    if constexpr (std::is_same_v<In, Out>) {
      std::memcpy(to, row, d * sizeof(In));
    } else {
      for (std::size_t k = 0; k < d; ++k) {
        In v;
        std::memcpy(&v, row + k * sizeof(In), sizeof(In));
        to[k] = static_cast<Out>(v);
      }
    }
  }
  return out;
}

}  // namespace

VectorSet read_vecs(const std::string& path, FileFormat f) {
  const char* ext = f == FileFormat::Bvecs ? ".bvecs" : f == FileFormat::Ivecs ? ".ivecs" : ".fvecs";
  const std::size_t value_bytes = f == FileFormat::Bvecs ? 1 : 4;
  const MappedFile file(path);
  const std::string_view s = file.view();
  if (s.size() < 4)
    throw_input(fmt::format("{}: row 1: the file ends inside the row's dimension ({} of 4 bytes)", path, s.size()));
  const std::int32_t d = dimension_at(s.data());
  if (d <= 0)
    throw_input(fmt::format("{}: row 1: dimension {} (each {} row starts with its dimension, at least 1; not a {} file?)",
                            path, d, ext, ext));
  const std::size_t dim = static_cast<std::size_t>(d), row_bytes = 4 + dim * value_bytes;
  if (row_bytes > s.size())
    throw_input(fmt::format("{}: row 1: dimension {} needs {} bytes a row, but the file has {} (truncated, or not a {} "
                            "file?)", path, d, row_bytes, s.size(), ext));
  const std::size_t n = s.size() / row_bytes, tail = s.size() % row_bytes;
  const auto mismatch = [&](std::size_t row) {
    return fmt::format("{}: row {} has dimension {}, but row 1 has {} (every row of a {} file has one dimension)", path,
                       row + 1, dimension_at(s.data() + row * row_bytes), d, ext);
  };
  const std::size_t bad = first_row_where(n, [&](std::size_t i) { return dimension_at(s.data() + i * row_bytes) != d; });
  if (bad < n) throw_input(mismatch(bad));
  if (tail > 0) {
    // A last row of another dimension is that, not a truncation.
    if (tail >= 4 && dimension_at(s.data() + n * row_bytes) != d) throw_input(mismatch(n));
    throw_input(fmt::format("{}: row {}: the file ends inside the row ({} of its {} bytes): truncated?", path, n + 1, tail,
                            row_bytes));
  }
  VectorSet v;
  if (f == FileFormat::Fvecs) v = VectorSet::from_rows(convert_rows<float, float>(s.data(), n, dim, row_bytes), n, d);
  else if (f == FileFormat::Bvecs) v = VectorSet::from_rows(convert_rows<std::uint8_t, float>(s.data(), n, dim, row_bytes), n, d);
  else v = VectorSet::from_rows(convert_rows<std::int32_t, double>(s.data(), n, dim, row_bytes), n, d);
  return v;
}

}  // namespace twobody
