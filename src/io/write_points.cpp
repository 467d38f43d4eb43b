#include <fmt/format.h>

#include <algorithm>
#include <cstdint>
#include <filesystem>
#include <ostream>
#include <vector>

#include "twobody/detail/io/array_output.hpp"
#include "twobody/error.hpp"
#include "twobody/io.hpp"

namespace twobody {

namespace {

// Writes one array by the path's format: .npy, .npz, .h5; false for text (the caller's).
bool write_array(const std::string& path, const ArrayOut& a) {
  switch (format_of(path)) {
    case FileFormat::Npy:
      write_output(path, [&](std::ostream& out) {
        out << npy_header(a);
        const std::size_t block = std::max<std::size_t>(1, (std::size_t{1} << 17) / a.width());
        std::vector<double> buf(std::min(a.rows, block) * a.width());
        for (std::size_t r = 0; r < a.rows; r += block) {
          const std::size_t n = std::min(block, a.rows - r);
          a.rows_at(r, n, buf.data());
          out.write(reinterpret_cast<const char*>(buf.data()), static_cast<std::streamsize>(n * a.width() * sizeof(double)));
        }
      });
      return true;
    case FileFormat::Npz: write_output(path, [&](std::ostream& out) { write_npz(out, {a}); }); return true;
    case FileFormat::Hdf5: write_hdf5_arrays(path, {a}); return true;
    case FileFormat::Fits:
      throw_config(fmt::format("{}: FITS output is not written: use .h5, .npy, .npz or text", path));
    case FileFormat::Fvecs:
    case FileFormat::Bvecs:
    case FileFormat::Ivecs:
      // (Their values are float32 or integers: float64 points would not survive the trip.)
      throw_config(fmt::format("{}: points and matrices are not written as {}: use .h5, .npy, .npz or text (vectors: "
                               "write_vectors)", path, std::filesystem::path(file_of(path)).extension().string()));
    default: return false;
  }
}
}  // namespace

void write_points(const std::string& path, const PointSet& p) {
  const std::size_t cols = static_cast<std::size_t>(p.dim() + (p.has_weights() ? 1 : 0));
  const auto value = [&](std::size_t i, std::size_t c) {
    return static_cast<int>(c) < p.dim() ? p.coord(static_cast<int>(c))[i] : p.weights()[i];
  };
  ArrayOut a{"points", false, p.size(), cols, [&](std::size_t first, std::size_t n, void* out) {
               auto* v = static_cast<double*>(out);
               for (std::size_t i = 0; i < n; ++i)
                 for (std::size_t c = 0; c < cols; ++c) v[i * cols + c] = value(first + i, c);
             }};
  if (!write_array(path, a)) write_output(path, [&](std::ostream& out) { write_text_rows(out, p.size(), cols, value); });
}

void write_matrix(const std::string& path, std::size_t rows, std::size_t cols, std::span<const double> values) {
  if (values.size() != rows * cols)
    throw Error(ErrorKind::Internal, fmt::format("write_matrix: {} values for {} x {}", values.size(), rows, cols));
  if (write_array(path, array_over("matrix", rows, cols, values))) return;
  write_output(path, [&](std::ostream& out) {
    write_text_rows(out, rows, cols, [&](std::size_t i, std::size_t j) { return values[i * cols + j]; });
  });
}

}  // namespace twobody
