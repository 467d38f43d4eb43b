// PQR files (PDB atoms with a charge and a radius: APBS's and Parboil cutcp's input), read for
// lattice maps. Only ATOM and HETATM records count; their last five whitespace-separated fields
// are x, y, z, charge and radius (PDB2PQR's whitespace-delimited form, which also takes the
// columns of fixed-width files whose fields do not run together).
#include <charconv>
#include <cmath>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "twobody/error.hpp"
#include "twobody/lattice_maps.hpp"

namespace twobody {

Atoms read_pqr(const std::string& path) {
  std::ifstream in(path);
  if (!in) throw_input(fmt::format("{}: cannot open the file", path));
  std::vector<std::vector<double>> xyz(3);
  Atoms atoms;
  std::string line;
  for (std::size_t number = 1; std::getline(in, line); ++number) {
    if (line.rfind("ATOM", 0) != 0 && line.rfind("HETATM", 0) != 0) continue;
    std::istringstream fields(line);
    std::vector<std::string> f;
    for (std::string w; fields >> w;) f.push_back(w);
    if (f.size() < 6) throw_input(fmt::format("{}:{}: an atom record needs x y z charge radius at its end", path, number));
    double v[5];
    for (int k = 0; k < 5; ++k) {
      const std::string& t = f[f.size() - 5 + static_cast<std::size_t>(k)];
      const auto [end, ec] = std::from_chars(t.data(), t.data() + t.size(), v[k]);
      if (ec != std::errc() || end != t.data() + t.size() || !std::isfinite(v[k]))
        throw_input(fmt::format("{}:{}: '{}' is not a finite number (x y z charge radius end an atom record)", path, number, t));
    }
    for (int k = 0; k < 3; ++k) xyz[static_cast<std::size_t>(k)].push_back(v[k]);
    atoms.charges.push_back(v[3]);
    atoms.radii.push_back(v[4]);
  }
  if (atoms.charges.empty()) throw_input(fmt::format("{}: no ATOM or HETATM records", path));
  atoms.positions = PointSet::from_columns(std::move(xyz));
  return atoms;
}

}  // namespace twobody
