// Lattice maps (potential, density, gridding) and short-range forces over arrays: the library's
// potential_map, density_map, grid_samples and short_range_forces, as the CLI's commands call
// them. The map's values move into a NumPy array (no copy); python/twobody/_lattice.py shapes
// them (nz, ny, nx) and wraps them in a result object.
#include <nanobind/stl/array.h>
#include <nanobind/stl/optional.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/vector.h>

#include <fmt/format.h>

#include "bindings.hpp"
#include "twobody/error.hpp"
#include "twobody/forces.hpp"
#include "twobody/lattice_maps.hpp"

namespace twobody::python {

namespace {

using Triple = std::optional<std::vector<double>>;
using Shape = std::optional<std::vector<std::int64_t>>;

// The placement the CLI's --spacing/--padding or --origin/--shape/--periodic give.
LatticePlacement placement(const PointSet& p, double spacing, double padding, const Triple& origin, const Shape& shape,
                           bool periodic) {
  const int dim = p.dim();
  if (origin.has_value() != shape.has_value()) throw_config("origin and shape go together");
  Lattice L;
  if (origin) {
    if (static_cast<int>(origin->size()) != dim || static_cast<int>(shape->size()) != dim)
      throw_config(fmt::format("origin and shape need {} values for {}-D sources", dim, dim));
    L.dim = dim;
    for (int k = 0; k < dim; ++k) {
      L.origin[k] = (*origin)[k];
      L.spacing[k] = spacing;
      L.shape[k] = (*shape)[k];
    }
  } else {
    L = Lattice::spanning(p, {spacing, spacing, spacing}, padding);
  }
  for (int k = 0; k < dim; ++k) L.periodic[k] = periodic;
  LatticePlacement at;
  at.lattice = L;
  return at;
}

Precision precision_of(const std::string& s) {
  if (s == "single") return Precision::Single;
  if (s == "double") return Precision::Double;
  throw_config(fmt::format("precision must be 'single' or 'double', not '{}'", s));
}

// The map as {values (flat, nodes × components, x fastest), origin, spacing, shape, periodic,
// components, precision, error bound, excluded, plan}.
nb::dict map_dict(LatticeMap&& m) {
  nb::dict d;
  const int dim = m.lattice.dim;
  std::vector<double> origin, spacing;
  std::vector<std::int64_t> shape;
  std::vector<bool> periodic;
  for (int k = 0; k < dim; ++k) {
    origin.push_back(m.lattice.origin[k]);
    spacing.push_back(m.lattice.spacing[k]);
    shape.push_back(m.lattice.shape[k]);
    periodic.push_back(m.lattice.periodic[k]);
  }
  d["origin"] = origin;
  d["spacing"] = spacing;
  d["shape"] = shape;
  d["periodic"] = periodic;
  d["components"] = m.components;
  d["precision"] = std::string(m.precision == Precision::Double ? "double" : "single");
  d["error_term"] = m.bound.term;
  d["error_step"] = m.bound.step;
  d["grid_bound"] = m.bound.grid_bound;
  d["terms"] = m.terms;
  d["excluded_count"] = m.excluded_count;
  std::vector<std::int32_t> excluded(m.excluded.begin(), m.excluded.end());
  d["excluded"] = to_numpy(std::move(excluded));
  d["plan"] = m.plan;
  d["seconds"] = m.seconds;
  d["values"] = to_numpy(std::move(m.values));
  return d;
}

nb::dict potential(nb::handle atoms, nb::handle charges, double spacing, double cutoff, double padding,
                   const Triple& origin, const Shape& shape, bool periodic, double exclusion, const std::string& precision,
                   const nb::dict& run) {
  const PointSet p = to_points(atoms, "atoms");
  const std::vector<double> q = to_doubles(charges, "charges");
  PotentialOptions o;
  o.at = placement(p, spacing, padding, origin, shape, periodic);
  o.cutoff = cutoff;
  o.exclusion = exclusion;
  o.precision = precision_of(precision);
  const RunOptions r = to_run_options(run);
  return map_dict(without_gil([&] { return potential_map(p, q, o, r); }));
}

nb::dict density(nb::handle points, nb::handle radii, nb::handle weights, double spacing, double cutoff, double blobbiness,
                 double padding, const Triple& origin, const Shape& shape, bool periodic, const std::string& precision,
                 const nb::dict& run) {
  const PointSet p = to_points(points, "points");
  const std::vector<double> R = to_doubles(radii, "radii");
  const std::vector<double> w = weights.is_none() ? std::vector<double>() : to_doubles(weights, "weights");
  DensityOptions o;
  o.at = placement(p, spacing, padding, origin, shape, periodic);
  o.cutoff = cutoff;
  o.blobbiness = blobbiness;
  o.precision = precision_of(precision);
  const RunOptions r = to_run_options(run);
  return map_dict(without_gil([&] { return density_map(p, R, w, o, r); }));
}

nb::dict gridding(nb::handle k, nb::handle re, nb::handle im, nb::handle sdc, const std::vector<std::int64_t>& grid,
                  double width, double beta, double oversampling, bool separable, bool wrap, const std::string& precision,
                  const nb::dict& run) {
  const PointSet p = to_points(k, "k");
  const std::vector<double> vr = to_doubles(re, "values (real parts)"), vi = to_doubles(im, "values (imaginary parts)");
  const std::vector<double> w = sdc.is_none() ? std::vector<double>() : to_doubles(sdc, "weights");
  GriddingOptions o;
  if (grid.size() != 1 && static_cast<int>(grid.size()) != p.dim())
    throw_config(fmt::format("grid: one size or {} sizes for {}-D samples, not {}", p.dim(), p.dim(), grid.size()));
  for (int a = 0; a < 3; ++a) o.grid[a] = a < p.dim() ? grid[grid.size() == 1 ? 0 : a] : 1;
  o.width = width;
  o.beta = beta;
  o.oversampling = oversampling;
  o.separable = separable;
  o.wrap = wrap;
  o.precision = precision_of(precision);
  const RunOptions r = to_run_options(run);
  return map_dict(without_gil([&] { return grid_samples(p, vr, vi, w, o, r); }));
}

nb::dict forces(nb::handle bodies, nb::handle charges, const std::string& potential, double cutoff, double epsilon,
                double sigma, bool shift, const std::optional<std::vector<double>>& box, const nb::dict& run) {
  const PointSet p = to_points(bodies, "bodies");
  const std::vector<double> q = charges.is_none() ? std::vector<double>() : to_doubles(charges, "charges");
  ForceOptions o;
  o.cutoff = cutoff;
  if (potential == "lennard-jones") o.force.potential = PairPotential::LennardJones;
  else if (potential == "coulomb") o.force.potential = PairPotential::CoulombSwitched;
  else throw_config(fmt::format("potential must be 'lennard-jones' or 'coulomb', not '{}'", potential));
  o.force.epsilon = epsilon;
  o.force.sigma = sigma;
  o.force.shift = shift;
  const std::optional<Box> b = to_box(box, p.dim());
  const RunOptions r = to_run_options(run);
  BodyForces f = without_gil([&] { return short_range_forces(p, q, o, b, r); });
  nb::dict d;
  const std::size_t n = f.energy.size();
  d["forces"] = to_numpy(std::move(f.force), n, f.dim);
  d["energy"] = to_numpy(std::move(f.energy));
  d["partners"] = to_numpy_int64(std::move(f.partners));
  d["total_energy"] = f.total_energy;
  d["virial"] = f.virial;
  d["closest"] = f.closest;
  d["fine"] = f.fine;
  d["meta"] = run_metadata(f.info).dump();
  return d;
}

}  // namespace

void bind_lattice(nb::module_& m) {
  using nb::arg;
  m.def("potential", &potential, arg("atoms"), arg("charges"), arg("spacing"), arg("cutoff"), arg("padding"),
        arg("origin").none(), arg("shape").none(), arg("periodic"), arg("exclusion"), arg("precision"), arg("run"));
  m.def("density", &density, arg("points"), arg("radii"), arg("weights").none(), arg("spacing"), arg("cutoff"),
        arg("blobbiness"), arg("padding"), arg("origin").none(), arg("shape").none(), arg("periodic"), arg("precision"),
        arg("run"));
  m.def("gridding", &gridding, arg("k"), arg("re"), arg("im"), arg("weights").none(), arg("grid"), arg("width"),
        arg("beta"), arg("oversampling"), arg("separable"), arg("wrap"), arg("precision"), arg("run"));
  m.def("forces", &forces, arg("bodies"), arg("charges").none(), arg("potential"), arg("cutoff"), arg("epsilon"),
        arg("sigma"), arg("shift"), arg("box").none(), arg("run"));
}

}  // namespace twobody::python
