// Reading catalogues from Python with the CLI's readers: text, .npy, Corrfunc's fast-food, HDF5
// and FITS (twobody/io.hpp), the same validation and messages as `--data FILE`.
#include <nanobind/stl/string.h>
#include <nanobind/stl/vector.h>

#include "bindings.hpp"
#include "twobody/io.hpp"

namespace twobody::python {

namespace {

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
  const std::size_t n = p.size();
  const int d = p.dim();
  std::vector<double> rows(n * static_cast<std::size_t>(d));
  for (int k = 0; k < d; ++k) {
    const auto col = p.coord(k);
    for (std::size_t i = 0; i < n; ++i) rows[i * d + k] = col[i];
  }
  nb::dict out;
  out["points"] = to_numpy(std::move(rows), n, static_cast<std::size_t>(d));
  if (p.has_weights()) out["weights"] = to_numpy(std::vector<double>(p.weights().begin(), p.weights().end()));
  if (p.has_regions()) out["regions"] = to_numpy(std::vector<std::int32_t>(p.regions().begin(), p.regions().end()));
  out["names"] = c.names;
  out["unused_columns"] = c.unused_columns;
  return out;
}

}  // namespace

void bind_files(nb::module_& m) {
  using namespace nb::literals;
  m.def("read", &read_py, "path"_a, "columns"_a, "names"_a, "weight_column"_a, "region_column"_a);
}

}  // namespace twobody::python
