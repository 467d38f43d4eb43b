// twobody._twobody: the module, and the engine's error kinds raised as the package's exception
// classes (python/twobody/_errors.py hands them over at import, by kind).
#include <nanobind/stl/string.h>
#include <nanobind/stl/vector.h>

#include <array>

#include "bindings.hpp"
#include "twobody/binning.hpp"
#include "twobody/config.hpp"
#include "twobody/device_memory.hpp"
#include "twobody/error.hpp"

namespace nb = nanobind;

namespace {

// Indexed by the kind's exit code (error.hpp: 1, 3..7). Strong references, never released: the
// classes live as long as the package.
std::array<PyObject*, 8> error_classes{};

void set_error_classes(const nb::dict& classes) {
  for (auto [kind, cls] : classes) {
    const int k = nb::cast<int>(kind);
    if (k < 0 || k >= static_cast<int>(error_classes.size())) throw nb::value_error("error kind out of range");
    Py_XDECREF(error_classes[k]);
    error_classes[k] = cls.ptr();
    Py_INCREF(error_classes[k]);
  }
}

}  // namespace

NB_MODULE(_twobody, m) {
  m.doc() = "twobody's engine (the C++ library); use the package twobody";
  m.attr("version") = twobody::kVersion;
  m.def("set_error_classes", &set_error_classes, nb::arg("classes"));
  m.def("available_backends", &twobody::available_backends);
  m.def("visible_devices", &twobody::visible_devices);
  m.def("set_device_memory_limit", &twobody::set_device_memory_limit, nb::arg("bytes"));
  m.def("device_memory_limit", &twobody::device_memory_limit);
  m.def("parse_memory_size", &twobody::parse_memory_size, nb::arg("text"), nb::arg("what"));
  // The CLI's bins of --rmin/--rmax/--nbins [--log]: the same edges, bit for bit.
  m.def("linear_edges", [](double lo, double hi, std::size_t n) { return twobody::Binning::linear(lo, hi, n).edges(); },
        nb::arg("lo"), nb::arg("hi"), nb::arg("nbins"));
  m.def("log_edges", [](double lo, double hi, std::size_t n) { return twobody::Binning::logarithmic(lo, hi, n).edges(); },
        nb::arg("lo"), nb::arg("hi"), nb::arg("nbins"));
  m.def("edges_from_file", [](const std::string& path) { return twobody::Binning::from_file(path).edges(); },
        nb::arg("path"));
  nb::register_exception_translator([](const std::exception_ptr& p, void*) {
    try {
      std::rethrow_exception(p);
    } catch (const twobody::Error& e) {
      PyObject* cls = error_classes[static_cast<int>(e.kind())];
      PyErr_SetString(cls ? cls : PyExc_RuntimeError, e.what());
    }
  });
  twobody::python::bind_statistics(m);
  twobody::python::bind_files(m);
  twobody::python::bind_vectors(m);
  twobody::python::bind_expressions(m);
  twobody::python::bind_lattice(m);
}
