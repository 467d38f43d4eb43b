// The statistics, one binding each: the CLI's command of the same name, over arrays. The points
// are read with the GIL held, the engine runs with it released, the table is made with it held.
#include <nanobind/stl/optional.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/vector.h>

#include <fmt/format.h>

#include "bindings.hpp"
#include "twobody/clustering2d.hpp"
#include "twobody/correlation.hpp"
#include "twobody/error.hpp"
#include "twobody/kde.hpp"
#include "twobody/scalar_correlation.hpp"
#include "twobody/statistics.hpp"

namespace twobody::python {

namespace {

using Lengths = std::optional<std::vector<double>>;

struct MaybePoints {
  bool given = false;
  PointSet points;
  const PointSet* get() const { return given ? &points : nullptr; }
};

MaybePoints maybe_points(nb::handle sample, const std::string& name) {
  MaybePoints m;
  if (!sample.is_none()) {
    m.given = true;
    m.points = to_points(sample, name);
  }
  return m;
}

CorrelationSpace parse_space(const std::string& s) {
  if (s == "box") return CorrelationSpace::Box;
  if (s == "open") return CorrelationSpace::Open;
  if (s == "sky") return CorrelationSpace::Sky;
  throw Error(ErrorKind::Internal, "unknown space " + s);
}

LineOfSight parse_los(const std::string& s) {
  if (s == "z") return LineOfSight::ZAxis;
  if (s == "midpoint") return LineOfSight::PairMidpoint;
  throw_config(fmt::format("line_of_sight must be 'z' or 'midpoint', not '{}'", s));
}

JackknifeRequest to_jackknife(const nb::dict& jk) {
  JackknifeRequest r;
  r.regions = nb::cast<int>(jk["regions"]);
  r.use_labels = nb::cast<bool>(jk["use_labels"]);
  r.estimator = parse_estimator(nb::cast<std::string>(jk["estimator"]));
  r.seed = nb::cast<std::uint64_t>(jk["seed"]);
  r.sky_about_origin = nb::cast<bool>(jk["about_origin"]);
  if (r.regions == 1 || r.regions < 0)
    throw_config(fmt::format("jackknife needs at least 2 regions, not {}", r.regions));
  return r;
}

// The jackknife of the vector a table shows: its leave-one-region-out samples (regions x n),
// mean, sigma and covariance (n x n), and how the regions were made.
nb::dict jackknife_dict(const JackknifeResult& j, std::vector<double> samples, JackknifeSummary s) {
  const std::size_t n = s.mean.size();
  nb::dict d;
  d["regions"] = j.regions;
  d["layout"] = j.layout;
  d["estimator"] = std::string(to_string(j.estimator));
  d["fitted_on_data"] = j.fitted_on_data;
  std::vector<double> n_data(j.n_data.begin(), j.n_data.end()), n_randoms(j.n_randoms.begin(), j.n_randoms.end());
  d["n_data"] = to_numpy(std::move(n_data));
  d["n_randoms"] = to_numpy(std::move(n_randoms));
  if (!j.labels.empty()) d["labels"] = to_numpy(std::vector<std::int32_t>(j.labels));
  d["samples"] = to_numpy(std::move(samples), j.regions, n);
  d["mean"] = to_numpy(std::move(s.mean));
  d["sigma"] = to_numpy(std::move(s.sigma));
  d["covariance"] = to_numpy(std::move(s.covariance), n, n);
  return d;
}

nb::dict binned(BinnedResult&& r) { return to_python(binned_table(r)); }

nb::dict sdh_py(nb::handle a, const std::optional<std::vector<double>>& edges, std::size_t nbins, const nb::dict& run) {
  const PointSet p = to_points(a, "data");
  RunOptions opt = to_run_options(run);
  BinnedResult r = without_gil([&] {
    // Without edges, as the CLI without --rmax: nbins from 0 to the bounding box's diagonal.
    const Binning bins = edges ? Binning::from_edges(*edges) : sdh_default_binning(p, nbins);
    return sdh(p, bins, opt);
  });
  return binned(std::move(r));
}

nb::dict paircount_py(nb::handle a, nb::handle b, const std::vector<double>& edges, const Lengths& box, bool weighted,
                      const nb::dict& run) {
  const PointSet pa = to_points(a, "data");
  const MaybePoints pb = maybe_points(b, "data2");
  const auto bx = to_box(box, pa.dim());
  RunOptions opt = to_run_options(run);
  BinnedResult r = without_gil([&] {
    return paircount(pa, pb.get(), Binning::from_edges(edges), bx, weighted, opt);
  });
  return binned(std::move(r));
}

nb::dict rdf_py(nb::handle a, nb::handle b, const std::vector<double>& edges, const std::vector<double>& box,
                const nb::dict& run) {
  const PointSet pa = to_points(a, "data");
  const MaybePoints pb = maybe_points(b, "data2");
  const auto bx = to_box(box, pa.dim());
  RunOptions opt = to_run_options(run);
  BinnedResult r = without_gil([&] {
    return rdf(pa, pb.get(), Binning::from_edges(edges), *bx, opt);
  });
  return binned(std::move(r));
}

// g(r)'s counts of many frames of one box in one run (frame_paircounts): `a` (and `b`) a list of
// samples, one a frame, of one size; npairs as a frames x nbins array, and the expected counts
// of one frame (rdf's column: the same for every frame of the box).
nb::dict rdf_frames_py(const nb::list& a, const nb::object& b, const std::vector<double>& edges,
                             const std::vector<double>& box, const nb::dict& run) {
  std::vector<PointSet> fa, fb;
  for (nb::handle f : a) fa.push_back(to_points(f, "frames"));
  if (!b.is_none())
    for (nb::handle f : nb::cast<nb::list>(b)) fb.push_back(to_points(f, "frames b"));
  if (fa.empty()) throw_config("no frames");
  const auto bx = to_box(box, fa.front().dim());
  RunOptions opt = to_run_options(run);
  const Binning bins = Binning::from_edges(edges);
  FrameCounts r = without_gil([&] { return frame_paircounts(fa, fb, bins, *bx, opt); });
  nb::dict out;
  out["expected"] = to_numpy(rdf_expected(fa.front().size(), fb.empty() ? std::nullopt : std::optional(fb.front().size()), bins, *bx));
  out["meta"] = run_metadata(r.info).dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
  out["counts"] = to_numpy_int64(std::move(r.counts), fa.size(), r.nbins);
  return out;
}

nb::dict angular_py(nb::handle a, nb::handle b, const std::vector<double>& edges, bool weighted, const nb::dict& run) {
  const PointSet pa = to_points(a, "data");
  const MaybePoints pb = maybe_points(b, "data2");
  RunOptions opt = to_run_options(run);
  BinnedResult r = without_gil([&] {
    return angular(pa, pb.get(), Binning::from_edges(edges), weighted, opt);
  });
  return binned(std::move(r));
}

// xi (box, open) and wtheta (sky): auto, or cross with data2 (and its random catalogues).
nb::dict correlation_py(const std::string& space_name, nb::handle data, nb::handle randoms, nb::handle data2,
                        nb::handle randoms2, const std::vector<double>& edges, const Lengths& box, bool weighted,
                        const nb::dict& jk, const nb::dict& run) {
  const CorrelationSpace space = parse_space(space_name);
  const PointSet d = to_points(data, "data");
  const std::vector<PointSet> r = to_point_list(randoms, "randoms");
  const MaybePoints d2 = maybe_points(data2, "data2");
  const std::vector<PointSet> r2 = to_point_list(randoms2, "randoms2");
  const auto bx = to_box(box, d.dim());
  const JackknifeRequest request = to_jackknife(jk);
  RunOptions opt = to_run_options(run);
  CorrelationResult x = without_gil([&] {
    const Binning bins = Binning::from_edges(edges);
    return d2.given ? cross_correlation(d, d2.points, r, r2, bins, space, bx, weighted, opt, request)
                    : correlation(d, r, bins, space, bx, weighted, opt, request);
  });
  nb::dict out = to_python(binned_table(x));
  if (x.jackknife)
    out["jackknife"] = jackknife_dict(*x.jackknife, x.jackknife->samples,
                                      {x.jackknife->mean, x.jackknife->sigma, x.jackknife->covariance});
  return out;
}

Binning2D bins_2d(const std::string& kind, const std::vector<double>& edges, double inner_max, std::size_t n_inner,
                  const std::string& los) {
  const Binning outer = Binning::from_edges(edges);
  return kind == "rppi" ? Binning2D::rp_pi(outer, inner_max, n_inner, parse_los(los))
                        : Binning2D::s_mu(outer, inner_max, n_inner, parse_los(los));
}

nb::dict paircount_2d_py(const std::string& kind, nb::handle a, nb::handle b, const std::vector<double>& edges,
                         double inner_max, std::size_t n_inner, const std::string& los, const Lengths& box,
                         bool weighted, const nb::dict& run) {
  const PointSet pa = to_points(a, "data");
  const MaybePoints pb = maybe_points(b, "data2");
  const auto bx = to_box(box, pa.dim());
  const Binning2D bins = bins_2d(kind, edges, inner_max, n_inner, los);
  RunOptions opt = to_run_options(run);
  Binned2DResult r = without_gil([&] {
    return paircount_2d(pa, pb.get(), bins, bx, weighted, opt);
  });
  return to_python(binned2d_table(r));
}

// xi-rppi, wp (per_outer) and xi-smu (per_outer: the multipoles).
nb::dict correlation_2d_py(const std::string& kind, bool per_outer, nb::handle data, nb::handle randoms,
                           nb::handle data2, nb::handle randoms2, const std::vector<double>& edges, double inner_max,
                           std::size_t n_inner, const std::string& los, const Lengths& box, bool weighted,
                           const nb::dict& jk, const nb::dict& run) {
  const PointSet d = to_points(data, "data");
  const std::vector<PointSet> r = to_point_list(randoms, "randoms");
  const MaybePoints d2 = maybe_points(data2, "data2");
  const std::vector<PointSet> r2 = to_point_list(randoms2, "randoms2");
  const auto bx = to_box(box, d.dim());
  const Binning2D bins = bins_2d(kind, edges, inner_max, n_inner, los);
  const JackknifeRequest request = to_jackknife(jk);
  RunOptions opt = to_run_options(run);
  Binned2DResult x = without_gil([&] {
    return d2.given ? cross_correlation_2d(d, d2.points, r, r2, bins, bx, weighted, request.estimator, opt, request)
                    : correlation_2d(d, r, bins, bx, weighted, request.estimator, opt, request);
  });
  nb::dict out = to_python(per_outer ? per_outer_table(x) : binned2d_table(x));
  if (x.jackknife) {
    const JackknifeResult& j = *x.jackknife;
    out["jackknife"] = per_outer ? jackknife_dict(j, x.per_outer_samples, x.per_outer_jackknife)
                                 : jackknife_dict(j, j.samples, {j.mean, j.sigma, j.covariance});
  }
  return out;
}

nb::dict kk_py(nb::handle a, nb::handle kappa_a, nb::handle b, nb::handle kappa_b, const std::vector<double>& edges,
               const std::string& space_name, const Lengths& box, bool weighted, const nb::dict& run) {
  const PointSet pa = to_points(a, "data");
  const std::vector<double> ka = to_doubles(kappa_a, "kappa");
  const MaybePoints pb = maybe_points(b, "data2");
  std::vector<double> kb;
  if (pb.given) kb = to_doubles(kappa_b, "kappa2");
  const auto bx = to_box(box, pa.dim());
  RunOptions opt = to_run_options(run);
  BinnedResult r = without_gil([&] {
    const ScalarCatalogue A{pa, ka}, B{pb.points, kb};
    return kk_correlation(A, pb.given ? &B : nullptr, Binning::from_edges(edges), parse_space(space_name), bx, weighted,
                          opt);
  });
  return binned(std::move(r));
}

nb::dict nk_py(nb::handle n, nb::handle k, nb::handle kappa, nb::handle randoms, const std::vector<double>& edges,
               const std::string& space_name, const Lengths& box, bool weighted, const nb::dict& run) {
  const PointSet pn = to_points(n, "data");
  const PointSet pk = to_points(k, "field");
  const std::vector<double> kk = to_doubles(kappa, "kappa");
  const MaybePoints pr = maybe_points(randoms, "randoms");
  const auto bx = to_box(box, pn.dim());
  RunOptions opt = to_run_options(run);
  BinnedResult r = without_gil([&] {
    return nk_correlation(pn, {pk, kk}, pr.get(), Binning::from_edges(edges), parse_space(space_name), bx, weighted, opt);
  });
  return binned(std::move(r));
}

nb::dict neighbours_py(nb::handle a, nb::handle b, double rmin, double rmax, const Lengths& box, bool weighted,
                       const nb::dict& run) {
  const PointSet pa = to_points(a, "data");
  const MaybePoints pb = maybe_points(b, "data2");
  const auto bx = to_box(box, pa.dim());
  RunOptions opt = to_run_options(run);
  const Binning range = Binning::linear(rmin, rmax, 1);
  Result r = without_gil([&] {
    return neighbour_counts(pa, pb.get(), range, bx, weighted, opt);
  });
  Table t = per_point_table(r);
  t.meta["rmin"] = range.lo();
  t.meta["rmax"] = range.hi();
  return to_python(std::move(t));
}

nb::dict matrix_py(nb::handle a, nb::handle b, bool sky, const Lengths& box, const nb::dict& run) {
  const PointSet pa = to_points(a, "data");
  const MaybePoints pb = maybe_points(b, "data2");
  if (sky && box) throw_config("sky takes no box: angles on the sphere have no periodic box");
  const auto bx = to_box(box, pa.dim());
  RunOptions opt = to_run_options(run);
  Result r = without_gil([&] {
    return sky ? angular_matrix(pa, pb.get(), opt) : distance_matrix(pa, pb.get(), bx, opt);
  });
  const std::size_t rows = r.rows, cols = r.cols;
  nb::dict out;
  out["meta"] = run_metadata(r).dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
  out["matrix"] = to_numpy_matrix(std::move(r.matrix), rows, cols);
  return out;
}

nb::dict kde_py(nb::handle a, nb::handle b, nb::handle y_a, nb::handle y_b, const std::string& kernel,
                double bandwidth, std::optional<double> cutoff, const Lengths& box, bool weighted,
                const nb::dict& run) {
  const PointSet pa = to_points(a, "data");
  const MaybePoints pb = maybe_points(b, "data2");
  const bool regression = !y_a.is_none();
  std::vector<double> ya, yb;
  if (regression) ya = to_doubles(y_a, "values");
  if (regression && pb.given) {
    if (y_b.is_none()) throw_config("kernel regression of two sets needs values for both (values2)");
    yb = to_doubles(y_b, "values2");
  }
  const auto bx = to_box(box, pa.dim());
  KdeOptions k;
  k.kernel = parse_kde_kernel(kernel);
  k.bandwidth = bandwidth;
  k.cutoff = cutoff;
  k.weighted = weighted;
  RunOptions opt = to_run_options(run);
  KernelSums s = without_gil([&] {
    return regression ? kernel_regression(pa, pb.get(), ya, yb, k, bx, opt) : kernel_sums(pa, pb.get(), k, bx, opt);
  });
  return to_python(kde_table(s));
}

}  // namespace

void bind_statistics(nb::module_& m) {
  using namespace nb::literals;
  m.def("sdh", &sdh_py, "data"_a, "edges"_a.none(), "nbins"_a, "run"_a);
  m.def("paircount", &paircount_py, "data"_a, "data2"_a.none(), "edges"_a, "box"_a.none(), "weighted"_a, "run"_a);
  m.def("rdf", &rdf_py, "data"_a, "data2"_a.none(), "edges"_a, "box"_a, "run"_a);
  m.def("rdf_frames", &rdf_frames_py, "frames"_a, "frames_b"_a.none(), "edges"_a, "box"_a, "run"_a);
  m.def("angular", &angular_py, "data"_a, "data2"_a.none(), "edges"_a, "weighted"_a, "run"_a);
  m.def("correlation", &correlation_py, "space"_a, "data"_a, "randoms"_a, "data2"_a.none(), "randoms2"_a, "edges"_a,
        "box"_a.none(), "weighted"_a, "jackknife"_a, "run"_a);
  m.def("paircount_2d", &paircount_2d_py, "kind"_a, "data"_a, "data2"_a.none(), "edges"_a, "inner_max"_a,
        "n_inner"_a, "line_of_sight"_a, "box"_a.none(), "weighted"_a, "run"_a);
  m.def("correlation_2d", &correlation_2d_py, "kind"_a, "per_outer"_a, "data"_a, "randoms"_a, "data2"_a.none(),
        "randoms2"_a, "edges"_a, "inner_max"_a, "n_inner"_a, "line_of_sight"_a, "box"_a.none(), "weighted"_a,
        "jackknife"_a, "run"_a);
  m.def("kk", &kk_py, "data"_a, "kappa"_a, "data2"_a.none(), "kappa2"_a.none(), "edges"_a, "space"_a, "box"_a.none(),
        "weighted"_a, "run"_a);
  m.def("nk", &nk_py, "data"_a, "field"_a, "kappa"_a, "randoms"_a.none(), "edges"_a, "space"_a, "box"_a.none(),
        "weighted"_a, "run"_a);
  m.def("neighbours", &neighbours_py, "data"_a, "data2"_a.none(), "rmin"_a, "rmax"_a, "box"_a.none(), "weighted"_a,
        "run"_a);
  m.def("matrix", &matrix_py, "data"_a, "data2"_a.none(), "sky"_a, "box"_a.none(), "run"_a);
  m.def("kde", &kde_py, "data"_a, "data2"_a.none(), "values"_a.none(), "values2"_a.none(), "kernel"_a, "bandwidth"_a,
        "cutoff"_a.none(), "box"_a.none(), "weighted"_a, "run"_a);
}

}  // namespace twobody::python
