#pragma once
// The extension twobody._twobody: NumPy arrays in, the library's tables out. Each function here
// is a thin call of the C++ library's public API (the very functions and table builders the
// command line uses, so the Python columns are the CLI's by construction); python/twobody/ turns
// the dictionaries these return into result objects.
#include <nanobind/nanobind.h>
#include <nanobind/ndarray.h>

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "twobody/box.hpp"
#include "twobody/engine.hpp"
#include "twobody/points.hpp"
#include "twobody/table.hpp"
#include "twobody/vectors.hpp"

namespace twobody::python {

namespace nb = nanobind;

// f() with the GIL released (every engine call: other Python threads run meanwhile), its result
// returned once the GIL is held again.
template <class F>
auto without_gil(F&& f) {
  nb::gil_scoped_release nogil;
  return f();
}

// A column of numbers as NumPy hands it over: any strides, float32 or float64 (the Python side
// converts integers), read-only is fine.
using Column = nb::ndarray<nb::ro, nb::ndim<1>, nb::device::cpu>;

// A catalogue as the Python side passes it: (columns, weights or None, region labels or None),
// each column a 1-D view (columns of an (n, d) array are strided views of it, not copies).
// `name` ("data", "randoms 2", ...) names the catalogue in errors. Throws Error(Input) for a
// non-finite value, columns of different lengths or an unsupported dtype.
PointSet to_points(nb::handle sample, const std::string& name);
std::vector<PointSet> to_point_list(nb::handle samples, const std::string& name);
std::vector<double> to_doubles(nb::handle column, const std::string& name);
// An (n, d) float16/32/64 array as a vector set: read in place where its rows are contiguous and
// aligned (the set then holds a reference to the array), else copied once into row-major rows of
// the same element type. Error(Input) naming `name` for another shape or dtype, or a non-finite value.
VectorSet to_vectors(nb::handle h, const std::string& name);

// None, one side (a cube) or one length per coordinate.
std::optional<Box> to_box(const std::optional<std::vector<double>>& lengths, int dim);

// The run's options from the Python call's keywords (backend, threads, path, max_pairs, ravg) and
// its progress callable (or None). The progress callback the engine gets also checks for Ctrl-C:
// with the GIL taken back for a moment, PyErr_CheckSignals; a pending KeyboardInterrupt (or an
// exception of the callable) is thrown as nb::python_error, which unwinds the run and is raised
// again in Python. The callable is a borrowed reference: the Python call that owns it outlives
// the run.
RunOptions to_run_options(const nb::dict& run);

// A table as {"columns": [(name, array), ...], "meta": JSON text}; the column vectors move into
// the arrays (no copy).
nb::dict to_python(Table&& t);
nb::object to_numpy(std::vector<double>&& v);
nb::object to_numpy(MatrixValues&& v);
nb::object to_numpy(std::vector<std::uint64_t>&& v);
nb::object to_numpy(std::vector<std::int32_t>&& v);
// rows x cols, row-major.
nb::object to_numpy(std::vector<double>&& v, std::size_t rows, std::size_t cols);
nb::object to_numpy_matrix(MatrixValues&& v, std::size_t rows, std::size_t cols);
// Indices and counts as int64, NumPy's index type (scikit-learn's, SciPy's sparse matrices' and
// FAISS's): an uint64 array mixed with Python integers promotes to float64. Moved, not copied.
nb::object to_numpy_int64(std::vector<std::uint64_t>&& v);
nb::object to_numpy_int64(std::vector<std::uint64_t>&& v, std::size_t rows, std::size_t cols);

void bind_statistics(nb::module_& m);
void bind_files(nb::module_& m);
void bind_vectors(nb::module_& m);
void bind_expressions(nb::module_& m);
void bind_lattice(nb::module_& m);

}  // namespace twobody::python
