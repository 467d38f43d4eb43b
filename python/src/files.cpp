// Catalogues from Python: read with the CLI's readers (text, .npy, Corrfunc's fast-food, HDF5 and
// FITS: twobody/io.hpp, the same validation and messages as `--data FILE`), and generated as
// `twobody generate` does (twobody/generate.hpp: the same catalogue for the same seed).
#include <nanobind/stl/string.h>
#include <nanobind/stl/vector.h>

#include "bindings.hpp"
#include "twobody/error.hpp"
#include "twobody/generate.hpp"
#include "twobody/io.hpp"
#include "twobody/statistics.hpp"

namespace twobody::python {

namespace {

// A point set as an (n, d) float64 array, one point a row.
nb::object rows_of(const PointSet& p) {
  const std::size_t n = p.size();
  const int d = p.dim();
  std::vector<double> rows(n * static_cast<std::size_t>(d));
  for (int k = 0; k < d; ++k) {
    const auto col = p.coord(k);
    for (std::size_t i = 0; i < n; ++i) rows[i * d + k] = col[i];
  }
  return to_numpy(std::move(rows), n, static_cast<std::size_t>(d));
}

// The points as an (n, d) float64 array, the weights and region labels when asked for, and the
// names a file gave its columns.
nb::dict read_py(const std::string& path, const std::vector<int>& columns, const std::vector<std::string>& names,
                 int weight_column, int region_column) {
  ReadOptions opt;
  opt.columns = columns;
  opt.column_names = names;
  opt.weight_column = weight_column;
  opt.region_column = region_column;
  Catalogue c = without_gil([&] { return read_catalogue(path, opt); });
  const PointSet& p = c.points;
  nb::dict out;
  out["points"] = rows_of(p);
  if (p.has_weights()) out["weights"] = to_numpy(std::vector<double>(p.weights().begin(), p.weights().end()));
  if (p.has_regions()) out["regions"] = to_numpy(std::vector<std::int32_t>(p.regions().begin(), p.regions().end()));
  out["names"] = c.names;
  out["unused_columns"] = c.unused_columns;
  return out;
}

// `twobody generate KIND`: uniform, clustered (Soneira-Peebles or Gaussian blobs) or
// concentrated points in a box, or uniform and clustered points on the sky (RA, Dec in degrees).
nb::object generate_py(const std::string& kind, std::size_t n, int dim, double side, bool sky, std::uint64_t seed,
                       const std::string& cluster, std::size_t blobs, double sigma, int eta, double lambda, int levels,
                       double radius, double fraction, double volume) {
  if (n == 0) throw_config("generate: n must be at least 1");
  ClusterOptions c;
  if (cluster == "blobs") c.kind = ClusterOptions::Kind::GaussianBlobs;
  else if (cluster != "soneira-peebles") throw_config("cluster must be 'soneira-peebles' or 'blobs', not '" + cluster + "'");
  c.blobs = blobs;
  c.sigma = sigma;
  c.eta = eta;
  c.lambda = lambda;
  c.levels = levels;
  c.radius = radius;
  PointSet p = without_gil([&] {
    if (kind == "uniform") return sky ? generate_uniform_sky(n, seed) : generate_uniform_box(n, dim, side, seed);
    if (kind == "clustered") return sky ? generate_clustered_sky(n, c, seed) : generate_clustered_box(n, dim, side, c, seed);
    if (kind == "concentrated") {
      if (sky) throw_config("concentrated catalogues are made in a box, not on the sky");
      return generate_concentrated_box(n, dim, side, fraction, volume, seed);
    }
    throw_config("kind must be 'uniform', 'clustered' or 'concentrated', not '" + kind + "'");
  });
  return rows_of(p);
}

// `twobody generate randoms --like DATA`: uniform over the data's footprint.
nb::dict randoms_like_py(nb::handle data, std::size_t n, const std::string& footprint, const std::vector<double>& box,
                         double resolution, std::size_t min_count, std::uint64_t seed) {
  const PointSet p = to_points(data, "data");
  RandomsLike how;
  if (footprint == "box") how.footprint = RandomsLike::Footprint::Box;
  else if (footprint == "sky") how.footprint = RandomsLike::Footprint::Sky;
  else if (footprint == "mocks") how.footprint = RandomsLike::Footprint::Mocks;
  else throw_config("footprint must be 'box', 'sky' or 'mocks', not '" + footprint + "'");
  how.box = box.size() == 1 ? std::vector<double>(static_cast<std::size_t>(p.dim()), box[0]) : box;
  how.resolution_deg = resolution;
  how.min_count = min_count;
  GeneratedRandoms r = without_gil([&] { return generate_randoms_like(p, n, how, seed); });
  nb::dict out;
  out["points"] = rows_of(r.points);
  if (r.points.has_weights())
    out["weights"] = to_numpy(std::vector<double>(r.points.weights().begin(), r.points.weights().end()));
  out["note"] = r.note;
  return out;
}

// The CLI's --wrap: every point outside the periodic box or cell moved in by whole box lengths or
// cell vectors, as the engine tests "inside" (points inside are left bit for bit).
nb::object wrap_py(nb::handle data, const std::vector<double>& box) {
  PointSet p = to_points(data, "data");
  const auto b = to_box(box, p.dim());
  without_gil([&] { wrap_into_box(p, *b); });
  return rows_of(p);
}

}  // namespace

void bind_files(nb::module_& m) {
  using namespace nb::literals;
  m.def("read", &read_py, "path"_a, "columns"_a, "names"_a, "weight_column"_a, "region_column"_a);
  m.def("generate", &generate_py, "kind"_a, "n"_a, "dim"_a, "side"_a, "sky"_a, "seed"_a, "cluster"_a, "blobs"_a,
        "sigma"_a, "eta"_a, "lambda_"_a, "levels"_a, "radius"_a, "fraction"_a, "volume"_a);
  m.def("wrap", &wrap_py, "data"_a, "box"_a);
  m.def("randoms_like", &randoms_like_py, "data"_a, "n"_a, "footprint"_a, "box"_a, "resolution"_a, "min_count"_a,
        "seed"_a);
}

}  // namespace twobody::python
