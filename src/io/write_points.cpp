#include <fmt/format.h>

#include <cstdint>
#include <ostream>

#include "twobody/error.hpp"
#include "twobody/io.hpp"

namespace twobody {

namespace {

bool is_npy(const std::string& path) { return format_of(path) == FileFormat::Npy; }

// A NumPy .npy version 1.0 header for a C-order float64 array of rows x cols.
void write_npy_header(std::ostream& out, std::size_t rows, std::size_t cols) {
  std::string header = fmt::format("{{'descr': '<f8', 'fortran_order': False, 'shape': ({}, {}), }}", rows, cols);
  while ((10 + header.size() + 1) % 64 != 0) header += ' ';
  header += '\n';
  const std::uint16_t hlen = static_cast<std::uint16_t>(header.size());
  out.write("\x93NUMPY\x01\x00", 8);
  out.write(reinterpret_cast<const char*>(&hlen), 2);
  out << header;
}

// rows x cols values as text, one row a line, 17 significant digits (they read back exactly).
template <class Value>
void write_text_rows(std::ostream& out, std::size_t rows, std::size_t cols, const Value& value) {
  fmt::memory_buffer buf;
  for (std::size_t i = 0; i < rows; ++i) {
    for (std::size_t c = 0; c < cols; ++c) {
      if (c) buf.push_back(' ');
      fmt::format_to(std::back_inserter(buf), "{:.17g}", value(i, c));
    }
    buf.push_back('\n');
    if (buf.size() > (1 << 20)) {
      out.write(buf.data(), static_cast<std::streamsize>(buf.size()));
      buf.clear();
    }
  }
  out.write(buf.data(), static_cast<std::streamsize>(buf.size()));
}

}  // namespace

void write_points(const std::string& path, const PointSet& p) {
  const std::size_t cols = static_cast<std::size_t>(p.dim() + (p.has_weights() ? 1 : 0));
  const auto value = [&](std::size_t i, std::size_t c) {
    return static_cast<int>(c) < p.dim() ? p.coord(static_cast<int>(c))[i] : p.weights()[i];
  };
  write_output(path, [&](std::ostream& out) {
    if (!is_npy(path)) return write_text_rows(out, p.size(), cols, value);
    write_npy_header(out, p.size(), cols);
    std::vector<double> row(cols);
    for (std::size_t i = 0; i < p.size(); ++i) {
      for (std::size_t c = 0; c < cols; ++c) row[c] = value(i, c);
      out.write(reinterpret_cast<const char*>(row.data()), static_cast<std::streamsize>(cols * sizeof(double)));
    }
  });
}

void write_matrix(const std::string& path, std::size_t rows, std::size_t cols, std::span<const double> values) {
  if (values.size() != rows * cols)
    throw Error(ErrorKind::Internal, fmt::format("write_matrix: {} values for {} x {}", values.size(), rows, cols));
  write_output(path, [&](std::ostream& out) {
    if (!is_npy(path))
      return write_text_rows(out, rows, cols, [&](std::size_t i, std::size_t j) { return values[i * cols + j]; });
    write_npy_header(out, rows, cols);
    out.write(reinterpret_cast<const char*>(values.data()), static_cast<std::streamsize>(values.size() * sizeof(double)));
  });
}

}  // namespace twobody
