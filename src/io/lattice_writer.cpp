// Lattice maps as files: .npy with a JSON sidecar (origin, spacing, shape, the function and the
// bound), and OpenDX (.dx, APBS's and VMD's map format). Whole or nothing (write_output).
#include <cmath>
#include <cstring>
#include <fstream>
#include <vector>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "twobody/detail/io/lattice_files.hpp"
#include "twobody/error.hpp"
#include "twobody/io.hpp"
#include "twobody/lattice_maps.hpp"

namespace twobody {

namespace {

bool ends_with(const std::string& s, const char* tail) {
  const std::size_t n = std::strlen(tail);
  if (s.size() < n) return false;
  for (std::size_t i = 0; i < n; ++i)
    if (std::tolower(static_cast<unsigned char>(s[s.size() - n + i])) != tail[i]) return false;
  return true;
}

// The .npy v1.0 header of a C-order array of `shape` (NumPy's (nz, ny, nx) or (ny, nx)).
std::string npy_header(const char* descr, const std::vector<std::int64_t>& shape) {
  std::string dims;
  for (std::int64_t s : shape) dims += fmt::format("{}, ", s);
  if (shape.size() > 1) dims.resize(dims.size() - 2);
  std::string dict = fmt::format("{{'descr': '{}', 'fortran_order': False, 'shape': ({}), }}", descr, dims);
  const std::size_t total = 10 + dict.size() + 1;
  dict.append((64 - total % 64) % 64, ' ');
  dict.push_back('\n');
  std::string h = "\x93NUMPY";
  h.push_back('\x01');
  h.push_back('\x00');
  h.push_back(static_cast<char>(dict.size() & 0xff));
  h.push_back(static_cast<char>(dict.size() >> 8));
  return h + dict;
}

nlohmann::json metadata(const LatticeMap& m, const std::string& extra) {
  const Lattice& L = m.lattice;
  nlohmann::json j;
  j["axis_order"] = L.dim == 3 ? "z, y, x (x fastest)" : "y, x (x fastest)";
  j["origin"] = std::vector<double>(L.origin.begin(), L.origin.begin() + L.dim);
  j["spacing"] = std::vector<double>(L.spacing.begin(), L.spacing.begin() + L.dim);
  j["shape_xyz"] = std::vector<std::int64_t>(L.shape.begin(), L.shape.begin() + L.dim);
  j["periodic"] = std::vector<bool>(L.periodic.begin(), L.periodic.begin() + L.dim);
  j["components"] = m.components;
  j["precision"] = m.precision == Precision::Single ? "single" : "double";
  j["error_bound"] = {{"per_term", m.bound.term}, {"sum_grid_step", m.bound.step}, {"grid_bound", m.bound.grid_bound},
                      {"rule", "a node with n terms: |value − exact| ≤ n·(per_term + step/2), then one rounding"}};
  j["excluded_nodes"] = m.excluded_count;
  j["terms"] = m.terms;
  if (m.spilled) j["spilled"] = m.spilled;
  j["seconds"] = m.seconds;
  j["plan"] = m.plan;
  const nlohmann::json more = nlohmann::json::parse(extra);
  for (auto it = more.begin(); it != more.end(); ++it) j[it.key()] = it.value();
  return j;
}

void write_npy(std::ostream& out, const LatticeMap& m) {
  const Lattice& L = m.lattice;
  std::vector<std::int64_t> shape;
  if (L.dim == 3) shape.push_back(L.shape[2]);
  shape.push_back(L.shape[1]);
  shape.push_back(L.shape[0]);
  const bool single = m.precision == Precision::Single;
  const char* descr = m.components == 2 ? (single ? "<c8" : "<c16") : (single ? "<f4" : "<f8");
  const std::string h = npy_header(descr, shape);
  out.write(h.data(), static_cast<std::streamsize>(h.size()));
  constexpr std::size_t kBlock = 1 << 16;
  if (single) {
    std::vector<float> buf;
    for (std::size_t i = 0; i < m.values.size(); i += kBlock) {
      const std::size_t n = std::min(kBlock, m.values.size() - i);
      buf.assign(m.values.begin() + static_cast<std::ptrdiff_t>(i), m.values.begin() + static_cast<std::ptrdiff_t>(i + n));
      out.write(reinterpret_cast<const char*>(buf.data()), static_cast<std::streamsize>(n * sizeof(float)));
    }
  } else {
    out.write(reinterpret_cast<const char*>(m.values.data()), static_cast<std::streamsize>(m.values.size() * sizeof(double)));
  }
}

void write_dx(std::ostream& out, const LatticeMap& m) {
  const Lattice& L = m.lattice;
  if (m.components != 1) throw_config("OpenDX maps are real: write a complex map as .npy");
  if (L.dim != 3) throw_config("OpenDX maps are 3-D: write a 2-D map as .npy");
  const auto nx = L.shape[0], ny = L.shape[1], nz = L.shape[2];
  out << fmt::format("# twobody lattice map\nobject 1 class gridpositions counts {} {} {}\n", nx, ny, nz);
  out << fmt::format("origin {:.17g} {:.17g} {:.17g}\n", L.origin[0], L.origin[1], L.origin[2]);
  out << fmt::format("delta {:.17g} 0 0\ndelta 0 {:.17g} 0\ndelta 0 0 {:.17g}\n", L.spacing[0], L.spacing[1], L.spacing[2]);
  out << fmt::format("object 2 class gridconnections counts {} {} {}\n", nx, ny, nz);
  out << fmt::format("object 3 class array type double rank 0 items {} data follows\n", L.nodes());
  // OpenDX's order is z fastest.
  fmt::memory_buffer buf;
  std::uint64_t col = 0;
  for (std::int64_t x = 0; x < nx; ++x)
    for (std::int64_t y = 0; y < ny; ++y)
      for (std::int64_t z = 0; z < nz; ++z) {
        fmt::format_to(std::back_inserter(buf), "{:.9g}{}", m.values[static_cast<std::size_t>(x + nx * (y + ny * z))],
                       ++col % 3 == 0 ? '\n' : ' ');
        if (buf.size() > (1 << 20)) {
          out.write(buf.data(), static_cast<std::streamsize>(buf.size()));
          buf.clear();
        }
      }
  if (col % 3 != 0) buf.push_back('\n');
  out.write(buf.data(), static_cast<std::streamsize>(buf.size()));
  out << "attribute \"dep\" string \"positions\"\nobject \"regular positions regular connections\" class field\n"
         "component \"positions\" value 1\ncomponent \"connections\" value 2\ncomponent \"data\" value 3\n";
}

}  // namespace

void write_lattice_map(const std::string& path, const LatticeMap& map, const std::string& meta_json) {
  if (map.values.size() != map.lattice.nodes() * static_cast<std::uint64_t>(map.components))
    throw Error(ErrorKind::Internal, "a lattice map whose values do not match its lattice");
  if (ends_with(path, ".dx")) {
    write_output(path, [&](std::ostream& out) { write_dx(out, map); });
    return;
  }
  if (ends_with(path, ".png")) {
    write_png_slice(path, map);
    return;
  }
  const nlohmann::json meta = metadata(map, meta_json);
  if (ends_with(path, ".h5") || ends_with(path, ".hdf5")) {
    write_hdf5_lattice(path, map, meta);
    return;
  }
  if (!ends_with(path, ".npy"))
    throw_config(
        fmt::format("a lattice map is written as .npy (with a .json sidecar), .h5, .dx or .png (the middle slice), not '{}'", path));
  write_output(path, [&](std::ostream& out) { write_npy(out, map); });
  write_output(path + ".json", [&](std::ostream& out) { out << meta.dump(2) << '\n'; });
}

}  // namespace twobody
