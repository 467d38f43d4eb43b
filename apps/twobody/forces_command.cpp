// The forces command: per body the short-range force and energy of its pairs within a cutoff,
// Lennard-Jones or cutoff Coulomb, open or periodic (seed 002's N-body case;
// twobody/forces.hpp). Writes an n × 4 table (fx, fy, fz, energy for 3-D bodies) and the totals.
#include <fmt/format.h>

#include <iostream>

#include "commands.hpp"
#include "mpi_session.hpp"
#include "twobody/error.hpp"
#include "twobody/forces.hpp"
#include "twobody/io.hpp"
#include "twobody/table.hpp"

namespace twobody::cli {

namespace {

struct ForcesCli {
  CommonOptions o;
  double cutoff = 0;
  std::string potential = "lennard-jones";
  double epsilon = 1, sigma = 1;
  bool shift = false;
  int charge_column = 0;
};

void add_forces_options(CLI::App& cmd, ForcesCli& s) {
  for (const char* name : {"--bins", "--rmin", "--rmax", "--nbins", "--log"})
    cmd.remove_option(cmd.get_option(name));
  cmd.get_option("--data")->description("the bodies: text, .npy, HDF5 or FITS (1- to 3-D coordinates)");
  cmd.get_option("--box")->description("periodic box: L, or Lx,Ly,Lz (orthorhombic; the cutoff at most half the smallest side)");
  cmd.get_option("--output")->description(
      "the per-body table: .npy (n x 4 float64: fx, fy, fz, energy; totals in FILE.npy.json), .h5, .csv, .json, .txt; "
      "without -o a summary");
  cmd.add_option("--cutoff", s.cutoff, "pairs closer than this interact")->required()->check(positive_number);
  cmd.add_option("--potential", s.potential, "lennard-jones (default) | coulomb (the switched form of `potential`)")
      ->check(CLI::IsMember({"lennard-jones", "coulomb"}));
  cmd.add_option("--epsilon", s.epsilon, "Lennard-Jones well depth (default 1)");
  cmd.add_option("--sigma", s.sigma, "Lennard-Jones diameter (default 1)")->check(positive_number);
  cmd.add_flag("--shift", s.shift, "Lennard-Jones: shift the energy to 0 at the cutoff (forces unchanged)");
  cmd.add_option("--charge-column", s.charge_column, "1-based column of the charges (coulomb)")->check(CLI::PositiveNumber);
}

// The per-body columns: the force's components and the energy, then the partners.
Table forces_table(const BodyForces& f) {
  Table t;
  const std::size_t n = f.energy.size();
  static const char* axes[] = {"fx", "fy", "fz"};
  for (std::size_t d = 0; d < f.dim; ++d) {
    std::vector<double> c(n);
    for (std::size_t i = 0; i < n; ++i) c[i] = f.force[i * f.dim + d];
    t.columns.push_back({axes[d], std::move(c)});
  }
  t.columns.push_back({"energy", f.energy});
  t.columns.push_back({"partners", f.partners});
  return t;
}

nlohmann::json totals_json(const BodyForces& f, const ForcesCli& s) {
  nlohmann::json m;
  m["potential"] = s.potential;
  m["cutoff"] = s.cutoff;
  if (s.potential == "lennard-jones") {
    m["epsilon"] = s.epsilon;
    m["sigma"] = s.sigma;
    m["shift"] = s.shift;
  }
  m["bodies"] = f.energy.size();
  m["total_energy"] = f.total_energy;
  m["virial"] = f.virial;
  m["closest"] = f.closest;
  m["fine"] = f.fine;
  m["columns"] = f.dim == 3 ? nlohmann::json{"fx", "fy", "fz", "energy"} : nlohmann::json(f.dim + 1);
  m["run"] = run_metadata(f.info);
  return m;
}

void run_forces(const ForcesCli& s, const Context& c) {
  const CommonOptions& o = s.o;
  const BackendWarmUp warm(o);
  const bool coulomb = s.potential == "coulomb";
  if (coulomb != (s.charge_column > 0))
    throw_config(coulomb ? "--potential coulomb needs --charge-column" : "--charge-column is for --potential coulomb");
  FieldCatalogue cat;
  if (coulomb) cat = load_field(o.data, o.columns, 0, s.charge_column, false, "charge");
  else cat.points = load_points(o.data, o.columns, 0, "");
  const auto box = make_box(o, cat.points.dim());
  if (box && o.wrap) wrap_into_box(cat.points, *box);
  ForceOptions f;
  f.cutoff = s.cutoff;
  f.force.potential = coulomb ? PairPotential::CoulombSwitched : PairPotential::LennardJones;
  f.force.epsilon = s.epsilon;
  f.force.sigma = s.sigma;
  f.force.shift = s.shift;
  const BodyForces r = short_range_forces(cat.points, cat.values, f, box, make_run_options(o, c.bar));
  c.bar.finish();
  if (!cli_writes_output()) return;
  nlohmann::json meta = totals_json(r, s);
  if (o.output.empty() && o.format.empty()) {
    double largest = 0;
    for (double v : r.force) largest = std::max(largest, std::abs(v));
    std::uint64_t pairs = 0;
    for (auto k : r.partners) pairs += k;
    std::cout << fmt::format("{} bodies, {} pairs within {}, total energy {:.17g}, virial {:.17g}, largest |F| component "
                             "{:.9g}; -o forces.npy writes them\n",
                             r.energy.size(), pairs / 2, s.cutoff, r.total_energy, r.virial, largest);
    return;
  }
  const std::string& out = o.output;
  if (out.size() > 4 && out.substr(out.size() - 4) == ".npy" && o.format.empty()) {
    std::vector<double> rows(r.energy.size() * (r.dim + 1));
    for (std::size_t i = 0; i < r.energy.size(); ++i) {
      for (std::size_t d = 0; d < r.dim; ++d) rows[i * (r.dim + 1) + d] = r.force[i * r.dim + d];
      rows[i * (r.dim + 1) + r.dim] = r.energy[i];
    }
    write_matrix(out, r.energy.size(), r.dim + 1, rows);
    write_output(out + ".json", [&](std::ostream& os) { os << meta.dump(2) << '\n'; });
    return;
  }
  Table t = forces_table(r);
  t.meta = meta;
  emit(t, o);
  // CSV and text tables carry no metadata: the totals on stderr.
  const TableFormat fmt_out = output_format(o);
  if (fmt_out == TableFormat::Csv || fmt_out == TableFormat::Text)
    std::cerr << fmt::format("twobody: forces: total energy {:.17g}, virial {:.17g}\n", r.total_energy, r.virial);
}

const Command<ForcesCli> forces_command{
    .name = "forces",
    .help = "per-body short-range forces and energies (Lennard-Jones or cutoff Coulomb), open or periodic, exact sums",
    .features = {.second_set = false, .weights = false},
    .add_options = add_forces_options,
    .run = run_forces,
    .examples =
        "  twobody generate uniform -n 4000 --box 16 --seed 4 -o bodies.txt\n"
        "  twobody forces --data bodies.txt --box 16 --cutoff 2.5 --potential lennard-jones --epsilon 1 --sigma 1 -o f.npy\n"
        "  twobody generate uniform -n 2000 --dim 4 --box 20 --seed 1 -o ions.txt\n"
        "  twobody forces --data ions.txt --potential coulomb --charge-column 4 --cutoff 4 -o f.csv\n",
};

}  // namespace

std::vector<Subcommand> forces_commands() { return {forces_command}; }

}  // namespace twobody::cli
