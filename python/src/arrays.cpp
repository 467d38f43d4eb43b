// NumPy arrays to point sets and tables to NumPy arrays.
#include <Python.h>
#include <fmt/format.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/vector.h>

#include <chrono>
#include <cstring>
#include <memory>
#include <span>
#include <utility>

#include "bindings.hpp"
#include "twobody/error.hpp"

namespace twobody::python {

namespace {

template <class T>
void copy_strided(const Column& c, double* out) {
  const T* x = static_cast<const T*>(c.data());
  const std::int64_t stride = c.stride(0);
  const std::size_t n = c.shape(0);
  if (stride == 1 && std::is_same_v<T, double>) {
    std::memcpy(out, x, n * sizeof(double));
    return;
  }
  for (std::size_t i = 0; i < n; ++i) out[i] = static_cast<double>(x[static_cast<std::int64_t>(i) * stride]);
}

// Columns the engine cannot read in place (float32, strided) are converted into float64 columns of
// the set's own, element by element in one pass; no intermediate copy is made on the way.
std::vector<double> column_values(const Column& c, const std::string& what) {
  std::vector<double> v(c.shape(0));
  if (c.dtype() == nb::dtype<double>())
    copy_strided<double>(c, v.data());
  else if (c.dtype() == nb::dtype<float>())
    copy_strided<float>(c, v.data());
  else
    throw_input(fmt::format("{}: arrays must be float32 or float64", what));
  return v;
}

Column as_column(nb::handle h, const std::string& what) {
  Column c;
  if (!nb::try_cast(h, c, false))
    throw_input(fmt::format("{}: expected a 1-D float32 or float64 array on the CPU", what));
  return c;
}

// float64 columns with unit stride (1-D arrays, the columns of a Fortran-order array) are read
// in place; anything else (float32, the columns of a C-order array) is converted into columns of
// the set's own, in one pass.
bool borrowable(const std::vector<Column>& arrays) {
  for (const Column& c : arrays)
    if (c.dtype() != nb::dtype<double>() || (c.stride(0) != 1 && c.shape(0) > 1) ||
        reinterpret_cast<std::uintptr_t>(c.data()) % alignof(double) != 0)
      return false;
  return true;
}

PointSet borrow(std::vector<Column>&& arrays) {
  std::vector<std::span<const double>> columns;
  for (const Column& c : arrays) columns.emplace_back(static_cast<const double*>(c.data()), c.shape(0));
  // The arrays' references, dropped with the GIL held whenever the last copy of the set goes.
  auto* kept = new std::vector<Column>(std::move(arrays));
  std::shared_ptr<const void> owner(kept, [](const void* k) {
    nb::gil_scoped_acquire gil;
    delete static_cast<const std::vector<Column>*>(k);
  });
  return PointSet::borrow(std::move(columns), std::move(owner));
}

PointSet copy(const std::vector<Column>& arrays, const std::string& name) {
  std::vector<std::vector<double>> columns;
  for (const Column& c : arrays) columns.push_back(column_values(c, name));
  return PointSet::from_columns(std::move(columns));
}

}  // namespace

std::vector<double> to_doubles(nb::handle column, const std::string& name) {
  return column_values(as_column(column, name), name);
}

PointSet to_points(nb::handle sample, const std::string& name) {
  nb::tuple t = nb::cast<nb::tuple>(sample);
  if (t.size() != 3) throw Error(ErrorKind::Internal, "to_points: expected (columns, weights, labels)");
  std::vector<Column> arrays;
  for (nb::handle h : nb::cast<nb::list>(t[0])) {
    arrays.push_back(as_column(h, name));
    if (arrays.size() > 1 && arrays.back().shape(0) != arrays.front().shape(0))
      throw_input(fmt::format("{}: coordinate columns of different lengths ({} and {})", name, arrays.front().shape(0),
                              arrays.back().shape(0)));
  }
  if (arrays.empty() || arrays.size() > static_cast<std::size_t>(kMaxDim))
    throw_config(fmt::format("{}: points must have 1 to {} coordinates, not {}", name, kMaxDim, arrays.size()));
  PointSet p = borrowable(arrays) ? borrow(std::move(arrays)) : copy(arrays, name);
  if (!t[1].is_none()) p.set_weights(to_doubles(t[1], name + " weights"));
  if (!t[2].is_none()) {
    // Labels arrive as int32 (the Python side checks and converts them).
    nb::ndarray<nb::ro, std::int32_t, nb::ndim<1>, nb::device::cpu> l;
    if (!nb::try_cast(t[2], l, false)) throw_input(fmt::format("{}: region labels must be a 1-D integer array", name));
    std::vector<std::int32_t> r(l.shape(0));
    for (std::size_t i = 0; i < r.size(); ++i) r[i] = l(i);
    p.set_regions(std::move(r));
  }
  p.check_finite(name);
  return p;
}

std::vector<PointSet> to_point_list(nb::handle samples, const std::string& name) {
  std::vector<PointSet> sets;
  nb::list l = nb::cast<nb::list>(samples);
  for (std::size_t k = 0; k < l.size(); ++k)
    sets.push_back(to_points(l[k], l.size() == 1 ? name : fmt::format("{} {}", name, k + 1)));
  return sets;
}

std::optional<Box> to_box(const std::optional<std::vector<double>>& lengths, int dim) {
  if (!lengths) return std::nullopt;
  const std::size_t n = lengths->size();
  if (n == 1 || static_cast<int>(n) == dim || (dim == 3 && (n == 6 || n == 9))) return Box::from_values(*lengths, dim);
  throw_config(fmt::format("box has {} lengths but the points have {} coordinates{}", n, dim,
                           dim == 3 ? " (a triclinic cell: [a, b, c, alpha, beta, gamma] or a 3x3 matrix)" : ""));
}

RunOptions to_run_options(const nb::dict& run) {
  RunOptions o;
  o.backend = nb::cast<std::string>(run["backend"]);
  o.threads = nb::cast<int>(run["threads"]);
  o.path = nb::cast<std::string>(run["path"]);
  o.max_pairs = nb::cast<std::size_t>(run["max_pairs"]);
  o.mean_separation = nb::cast<bool>(run["ravg"]);
  // None: one device; "all": every visible one; else the list (_api.py's _devices checked it).
  if (run.contains("devices") && !run["devices"].is_none())
    o.devices = nb::isinstance<nb::str>(run["devices"]) ? visible_devices() : nb::cast<std::vector<int>>(run["devices"]);
  PyObject* callable = run.contains("progress") && !run["progress"].is_none() ? run["progress"].ptr() : nullptr;
  // Called from one engine thread at a time; a Python call every 0.1 s at most (signals are
  // checked on every call: a Ctrl-C stops the run within one progress step).
  struct Shown {
    std::chrono::steady_clock::time_point last{};
  };
  o.progress = [callable, shown = std::make_shared<Shown>()](double f) {
    nb::gil_scoped_acquire gil;
    if (PyErr_CheckSignals() != 0) throw nb::python_error();
    if (!callable) return;
    const auto now = std::chrono::steady_clock::now();
    if (f < 1.0 && now - shown->last < std::chrono::milliseconds(100)) return;
    shown->last = now;
    const nb::handle fn(callable);
    fn(f);  // an exception of the callable: nb::python_error, unwinding the run
  };
  return o;
}

namespace {
// The vector moves into the array's owner: NumPy reads its storage as elements of type Shown.
template <class Shown, class V>
nb::object vector_as_numpy(V&& v, std::size_t ndim, const std::size_t* shape) {
  auto* owned = new std::decay_t<V>(std::move(v));
  nb::capsule owner(owned, [](void* p) noexcept { delete static_cast<std::decay_t<V>*>(p); });
  return nb::cast(nb::ndarray<nb::numpy, Shown>(reinterpret_cast<Shown*>(owned->data()), ndim, shape, owner));
}
template <class V>
nb::object vector_to_numpy(V&& v, std::size_t ndim, const std::size_t* shape) {
  return vector_as_numpy<typename std::decay_t<V>::value_type>(std::forward<V>(v), ndim, shape);
}
}  // namespace

nb::object to_numpy(std::vector<double>&& v) {
  const std::size_t shape[1] = {v.size()};
  return vector_to_numpy(std::move(v), 1, shape);
}
nb::object to_numpy(MatrixValues&& v) {
  const std::size_t shape[1] = {v.size()};
  return vector_to_numpy(std::move(v), 1, shape);
}
nb::object to_numpy(std::vector<std::uint64_t>&& v) {
  const std::size_t shape[1] = {v.size()};
  return vector_to_numpy(std::move(v), 1, shape);
}
nb::object to_numpy(std::vector<std::int32_t>&& v) {
  const std::size_t shape[1] = {v.size()};
  return vector_to_numpy(std::move(v), 1, shape);
}
nb::object to_numpy(std::vector<double>&& v, std::size_t rows, std::size_t cols) {
  const std::size_t shape[2] = {rows, cols};
  return vector_to_numpy(std::move(v), 2, shape);
}
// An uint64 is read as the int64 of the same bits (the aliasing rules allow a type's signed and
// unsigned variants); every value is an index or a count, below 2^63, so the value is the same.
nb::object to_numpy_int64(std::vector<std::uint64_t>&& v) {
  const std::size_t shape[1] = {v.size()};
  return vector_as_numpy<std::int64_t>(std::move(v), 1, shape);
}
nb::object to_numpy_int64(std::vector<std::uint64_t>&& v, std::size_t rows, std::size_t cols) {
  const std::size_t shape[2] = {rows, cols};
  return vector_as_numpy<std::int64_t>(std::move(v), 2, shape);
}
nb::object to_numpy_matrix(MatrixValues&& v, std::size_t rows, std::size_t cols) {
  const std::size_t shape[2] = {rows, cols};
  return vector_to_numpy(std::move(v), 2, shape);
}

nb::dict to_python(Table&& t) {
  nb::list columns;
  for (TableColumn& c : t.columns)
    columns.append(nb::make_tuple(c.name, std::visit([](auto& v) { return to_numpy(std::move(v)); }, c.values)));
  nb::dict d;
  d["columns"] = columns;
  d["meta"] = t.meta.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
  return d;
}

}  // namespace twobody::python
