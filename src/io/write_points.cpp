#include <fmt/format.h>

#include <cstdint>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <memory>

#include "twobody/error.hpp"
#include "twobody/io.hpp"

namespace twobody {

void write_points(const std::string& path, const PointSet& p) {
  const int cols = p.dim() + (p.has_weights() ? 1 : 0);
  const auto value = [&](std::size_t i, int c) {
    return c < p.dim() ? p.coord(c)[i] : p.weights()[i];
  };
  if (std::filesystem::path(path).extension() == ".npy") {
    std::string header = fmt::format("{{'descr': '<f8', 'fortran_order': False, 'shape': ({}, {}), }}", p.size(), cols);
    while ((10 + header.size() + 1) % 64 != 0) header += ' ';
    header += '\n';
    std::ofstream out(path, std::ios::binary);
    if (!out) throw_input(fmt::format("{}: cannot open for writing", path));
    const std::uint16_t hlen = static_cast<std::uint16_t>(header.size());
    out.write("\x93NUMPY\x01\x00", 8);
    out.write(reinterpret_cast<const char*>(&hlen), 2);
    out << header;
    for (std::size_t i = 0; i < p.size(); ++i)
      for (int c = 0; c < cols; ++c) {
        const double v = value(i, c);
        out.write(reinterpret_cast<const char*>(&v), 8);
      }
    if (!out) throw_input(fmt::format("{}: write failed", path));
    return;
  }
  std::unique_ptr<std::FILE, int (*)(std::FILE*)> f(std::fopen(path.c_str(), "w"), &std::fclose);
  if (!f) throw_input(fmt::format("{}: cannot open for writing", path));
  fmt::memory_buffer buf;
  for (std::size_t i = 0; i < p.size(); ++i) {
    for (int c = 0; c < cols; ++c) {
      if (c) buf.push_back(' ');
      fmt::format_to(std::back_inserter(buf), "{:.17g}", value(i, c));
    }
    buf.push_back('\n');
    if (buf.size() > (1 << 20)) {
      std::fwrite(buf.data(), 1, buf.size(), f.get());
      buf.clear();
    }
  }
  std::fwrite(buf.data(), 1, buf.size(), f.get());
  if (std::ferror(f.get())) throw_input(fmt::format("{}: write failed", path));
}

void write_matrix(const std::string& path, std::size_t rows, std::size_t cols, std::span<const double> values) {
  if (values.size() != rows * cols)
    throw Error(ErrorKind::Internal, fmt::format("write_matrix: {} values for {} x {}", values.size(), rows, cols));
  if (std::filesystem::path(path).extension() == ".npy") {
    std::string header = fmt::format("{{'descr': '<f8', 'fortran_order': False, 'shape': ({}, {}), }}", rows, cols);
    while ((10 + header.size() + 1) % 64 != 0) header += ' ';
    header += '\n';
    std::ofstream out(path, std::ios::binary);
    if (!out) throw_input(fmt::format("{}: cannot open for writing", path));
    const std::uint16_t hlen = static_cast<std::uint16_t>(header.size());
    out.write("\x93NUMPY\x01\x00", 8);
    out.write(reinterpret_cast<const char*>(&hlen), 2);
    out << header;
    out.write(reinterpret_cast<const char*>(values.data()), static_cast<std::streamsize>(values.size() * sizeof(double)));
    if (!out) throw_input(fmt::format("{}: write failed", path));
    return;
  }
  std::unique_ptr<std::FILE, int (*)(std::FILE*)> f(std::fopen(path.c_str(), "w"), &std::fclose);
  if (!f) throw_input(fmt::format("{}: cannot open for writing", path));
  fmt::memory_buffer buf;
  for (std::size_t i = 0; i < rows; ++i) {
    for (std::size_t j = 0; j < cols; ++j) {
      if (j) buf.push_back(' ');
      fmt::format_to(std::back_inserter(buf), "{:.17g}", values[i * cols + j]);
    }
    buf.push_back('\n');
    if (buf.size() > (1 << 20)) {
      std::fwrite(buf.data(), 1, buf.size(), f.get());
      buf.clear();
    }
  }
  std::fwrite(buf.data(), 1, buf.size(), f.get());
  if (std::ferror(f.get())) throw_input(fmt::format("{}: write failed", path));
}

}  // namespace twobody
