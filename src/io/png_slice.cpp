// A lattice map's middle z-slice as a PNG (src/io/lattice_files.hpp), through libpng, written
// whole or not at all (write_output_file).
#include <png.h>

#include <algorithm>
#include <cmath>
#include <csetjmp>
#include <cstdio>
#include <vector>

#include <fmt/format.h>

#include "twobody/detail/io/array_output.hpp"
#include "twobody/detail/io/lattice_files.hpp"
#include "twobody/error.hpp"

namespace twobody {

namespace {

// Each node of the slice as RGB: signed maps blue (negative) – white (0) – red (positive),
// symmetric so that 0 is white; non-negative ones from black to white.
std::vector<unsigned char> colours(const LatticeMap& m, std::int64_t z) {
  const Lattice& L = m.lattice;
  const std::size_t nx = static_cast<std::size_t>(L.shape[0]), ny = static_cast<std::size_t>(L.shape[1]);
  std::vector<double> v(nx * ny);
  for (std::size_t i = 0; i < nx * ny; ++i) {
    const std::size_t at = (static_cast<std::size_t>(z) * nx * ny + i) * static_cast<std::size_t>(m.components);
    v[i] = m.components == 2 ? std::hypot(m.values[at], m.values[at + 1]) : m.values[at];
  }
  double lo = 0, hi = 0;
  for (double x : v) {
    lo = std::min(lo, x);
    hi = std::max(hi, x);
  }
  const bool signed_map = lo < 0;
  const double scale = std::max(-lo, hi) > 0 ? std::max(-lo, hi) : 1.0;
  std::vector<unsigned char> rgb(nx * ny * 3);
  for (std::size_t y = 0; y < ny; ++y)
    for (std::size_t x = 0; x < nx; ++x) {
      // Image rows top-down: y grows upwards in the picture.
      unsigned char* px = &rgb[((ny - 1 - y) * nx + x) * 3];
      const double t = v[y * nx + x] / scale;  // in [−1, 1]
      const auto byte = [](double f) { return static_cast<unsigned char>(std::lround(std::clamp(f, 0.0, 1.0) * 255)); };
      if (signed_map) {
        px[0] = byte(t < 0 ? 1 + t : 1.0);
        px[1] = byte(1 - std::fabs(t));
        px[2] = byte(t > 0 ? 1 - t : 1.0);
      } else {
        px[0] = px[1] = px[2] = byte(t);
      }
    }
  return rgb;
}

}  // namespace

void write_png_slice(const std::string& path, const LatticeMap& m) {
  const Lattice& L = m.lattice;
  const std::vector<unsigned char> rgb = colours(m, L.shape[2] / 2);
  write_output_file(path, [&](const std::string& file) {
    std::FILE* fp = std::fopen(file.c_str(), "wb");
    if (!fp) throw_output(fmt::format("{}: cannot create the file", path));
    png_structp png = png_create_write_struct(PNG_LIBPNG_VER_STRING, nullptr, nullptr, nullptr);
    png_infop info = png ? png_create_info_struct(png) : nullptr;
    if (!png || !info || setjmp(png_jmpbuf(png))) {
      png_destroy_write_struct(&png, &info);
      std::fclose(fp);
      throw_output(fmt::format("{}: cannot write the PNG", path));
    }
    png_init_io(png, fp);
    png_set_IHDR(png, info, static_cast<png_uint_32>(L.shape[0]), static_cast<png_uint_32>(L.shape[1]), 8, PNG_COLOR_TYPE_RGB,
                 PNG_INTERLACE_NONE, PNG_COMPRESSION_TYPE_DEFAULT, PNG_FILTER_TYPE_DEFAULT);
    png_write_info(png, info);
    for (std::int64_t y = 0; y < L.shape[1]; ++y)
      png_write_row(png, const_cast<png_bytep>(rgb.data() + static_cast<std::size_t>(y * L.shape[0]) * 3));
    png_write_end(png, nullptr);
    png_destroy_write_struct(&png, &info);
    if (std::fclose(fp) != 0) throw_output(fmt::format("{}: write failed", path));
  });
}

}  // namespace twobody
