// Vectors of any dimension from NumPy arrays, and the similarity joins, k nearest neighbours and
// all-pairs matrices over them (twobody/joins.hpp, twobody/matrices.hpp). The arrays are read with the GIL held (checked and, where the engine
// cannot read them in place, copied with it released), the engine runs with it released.
#include <nanobind/stl/string.h>

#include <fmt/format.h>

#include <algorithm>
#include <climits>
#include <cstdint>
#include <cstring>
#include <limits>
#include <memory>
#include <optional>
#include <vector>

#include "bindings.hpp"
#include "twobody/error.hpp"
#include "twobody/joins.hpp"
#include "twobody/matrices.hpp"
#include "twobody/mutual_information.hpp"
#include "twobody/table.hpp"
#include "twobody/vectors.hpp"

namespace twobody::python {

namespace {

// Any strides, read-only is fine; the dtype is checked here (nanobind has no C++ type for float16).
using Rows = nb::ndarray<nb::ro, nb::ndim<2>, nb::device::cpu>;

std::optional<Element> element_of(const nb::dlpack::dtype& t) {
  if (t.code != static_cast<std::uint8_t>(nb::dlpack::dtype_code::Float) || t.lanes != 1) return std::nullopt;
  switch (t.bits) {
    case 16: return Element::F16;
    case 32: return Element::F32;
    case 64: return Element::F64;
    default: return std::nullopt;
  }
}

// The row stride (in elements) at which the engine reads the array in place, or 0 where it cannot:
// rows whose elements are not adjacent (Fortran order, a column step), rows in reverse order or
// repeated (stride 0, as np.broadcast_to makes them) or overlapping, or a pointer not aligned to
// the element (the engine reads elements as their type).
std::size_t borrowable_stride(const Rows& r, std::size_t element_size) {
  const std::size_t n = r.shape(0), dim = r.shape(1);
  if (dim > 1 && r.stride(1) != 1) return 0;
  if (reinterpret_cast<std::uintptr_t>(r.data()) % element_size != 0) return 0;
  if (n <= 1) return dim;
  if (r.stride(0) < static_cast<std::int64_t>(dim)) return 0;
  return static_cast<std::size_t>(r.stride(0));
}

// Row-major rows of the array's own element type, element by element (memcpy: the source may be
// unaligned). In blocks of rows, so that a Fortran-order array is read down each column of the
// block rather than one whole column apart per element.
template <class T>
std::vector<T> copy_rows(const Rows& r) {
  const std::size_t n = r.shape(0), dim = r.shape(1);
  const auto* base = static_cast<const unsigned char*>(r.data());
  const std::ptrdiff_t s0 = r.stride(0), s1 = r.stride(1);
  std::vector<T> out(n * dim);
  constexpr std::size_t kBlock = 64;
  for (std::size_t i0 = 0; i0 < n; i0 += kBlock) {
    const std::size_t i1 = std::min(n, i0 + kBlock);
    for (std::size_t k = 0; k < dim; ++k)
      for (std::size_t i = i0; i < i1; ++i) {
        const std::ptrdiff_t at = static_cast<std::ptrdiff_t>(i) * s0 + static_cast<std::ptrdiff_t>(k) * s1;
        std::memcpy(&out[i * dim + k], base + at * static_cast<std::ptrdiff_t>(sizeof(T)), sizeof(T));
      }
  }
  return out;
}

VectorSet copied(const Rows& r, Element e, std::size_t n, int dim) {
  switch (e) {
    case Element::F16: return VectorSet::from_half_bits(copy_rows<std::uint16_t>(r), n, dim);
    case Element::F32: return VectorSet::from_rows(copy_rows<float>(r), n, dim);
    case Element::F64: return VectorSet::from_rows(copy_rows<double>(r), n, dim);
  }
  throw Error(ErrorKind::Internal, "copied: unknown element type");
}

struct MaybeVectors {
  std::optional<VectorSet> set;
  const VectorSet* get() const { return set ? &*set : nullptr; }
};

MaybeVectors maybe_vectors(nb::handle h, const std::string& name) {
  MaybeVectors m;
  if (!h.is_none()) m.set = to_vectors(h, name);
  return m;
}

Metric parse_metric(const std::string& s) {
  if (s == "euclidean") return Metric::Euclidean;
  if (s == "cosine") return Metric::Cosine;
  throw_config(fmt::format("metric must be 'euclidean' or 'cosine', not '{}'", s));
}

JoinOutput parse_emit(const std::string& s) {
  if (s == "pairs") return JoinOutput::Pairs;
  if (s == "csr") return JoinOutput::Csr;
  if (s == "counts") return JoinOutput::Counts;
  if (s == "total") return JoinOutput::Total;
  throw_config(fmt::format("emit must be 'pairs', 'csr', 'counts' or 'total', not '{}'", s));
}

// The run's metadata as the other bindings give it.
nlohmann::json metadata(RunInfo&& info) { return run_metadata(info); }

std::string dump(const nlohmann::json& meta) {
  return meta.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
}

// A pair list as three columns, the records freed as they are split (the list can be most of
// the memory a run holds).
struct PairColumns {
  std::vector<std::uint64_t> i, j;
  std::vector<double> distance;
  explicit PairColumns(std::vector<PairRecord>&& pairs) {
    i.reserve(pairs.size());
    j.reserve(pairs.size());
    distance.reserve(pairs.size());
    for (const PairRecord& p : pairs) {
      i.push_back(p.i);
      j.push_back(p.j);
      distance.push_back(p.value);
    }
    std::vector<PairRecord>().swap(pairs);
  }
};

nb::dict join_py(nb::handle a, nb::handle b, double eps, const std::string& metric, const std::string& emit,
                 const nb::dict& run) {
  const VectorSet va = to_vectors(a, "data");
  const MaybeVectors vb = maybe_vectors(b, "data2");
  JoinOptions o;
  o.eps = eps;
  o.metric = parse_metric(metric);
  o.output = parse_emit(emit);
  const RunOptions opt = to_run_options(run);
  std::optional<PairColumns> columns;
  JoinResult r = without_gil([&] {
    JoinResult j = similarity_join(va, vb.get(), o, opt);
    if (j.output == JoinOutput::Pairs) columns.emplace(std::move(j.pairs));
    return j;
  });
  nb::dict out;
  out["total"] = r.total;
  switch (r.output) {
    case JoinOutput::Pairs:
      out["i"] = to_numpy_int64(std::move(columns->i));
      out["j"] = to_numpy_int64(std::move(columns->j));
      out["distance"] = to_numpy(std::move(columns->distance));
      break;
    case JoinOutput::Csr:
      out["indptr"] = to_numpy_int64(std::move(r.indptr));
      out["indices"] = to_numpy_int64(std::move(r.indices));
      out["distances"] = to_numpy(std::move(r.distances));
      break;
    case JoinOutput::Counts:
      out["counts"] = to_numpy_int64(std::move(r.counts));
      out["counts2"] = vb.set ? to_numpy_int64(std::move(r.counts_b)) : nb::none();
      break;
    case JoinOutput::Total: break;
  }
  nlohmann::json meta = metadata(std::move(r.info));
  meta["metric"] = metric;
  meta["eps"] = eps;
  out["meta"] = dump(meta);
  return out;
}

nb::dict knn_py(nb::handle a, nb::handle b, int k, const std::string& metric, const nb::dict& run) {
  const VectorSet va = to_vectors(a, "queries");
  const MaybeVectors vb = maybe_vectors(b, "data2");
  const Metric m = parse_metric(metric);
  const RunOptions opt = to_run_options(run);
  KnnResult r = without_gil([&] { return nearest_neighbours(va, vb.get(), k, m, opt); });
  const auto rows = r.n, cols = static_cast<std::size_t>(r.k);
  nb::dict out;
  out["indices"] = to_numpy_int64(std::move(r.indices), rows, cols);
  out["distances"] = to_numpy(std::move(r.distances), rows, cols);
  nlohmann::json meta = metadata(std::move(r.info));
  meta["metric"] = metric;
  meta["k"] = k;
  out["meta"] = dump(meta);
  return out;
}

// Mutual information of the rows (variables) over their columns (samples), Daub et al.'s B-splines.
nb::dict mutual_information_py(nb::handle a, nb::handle b, int bins, int order, const std::string& unit,
                               const nb::dict& run) {
  const VectorSet va = to_vectors(a, "data");
  const MaybeVectors vb = maybe_vectors(b, "data2");
  MutualInformationOptions o;
  o.bins = bins;
  o.order = order;
  if (unit != "bits" && unit != "nats") throw_config(fmt::format("unit must be 'bits' or 'nats', not '{}'", unit));
  o.unit = unit == "bits" ? InformationUnit::Bits : InformationUnit::Nats;
  const RunOptions opt = to_run_options(run);
  MutualInformationMatrix m = without_gil([&] { return mutual_information(va, vb.get(), o, opt); });
  nb::dict out;
  out["matrix"] = to_numpy_matrix(std::move(m.values), m.rows, m.cols);
  out["entropy"] = to_numpy(std::move(m.entropy_a));
  out["entropy2"] = vb.set ? to_numpy(std::move(m.entropy_b)) : nb::none();
  nlohmann::json meta = metadata(std::move(m.info));
  meta["bins"] = bins;
  meta["order"] = order;
  meta["unit"] = unit;
  out["meta"] = dump(meta);
  return out;
}

// The join's pairs written to `path` (a table format) as they are found: spooled to a temporary
// file beside it, never all in memory (the CLI's join does the same).
nb::dict join_to_file_py(nb::handle a, nb::handle b, double eps, const std::string& metric, const std::string& path,
                         const std::string& format, const nb::dict& run) {
  const VectorSet va = to_vectors(a, "data");
  const MaybeVectors vb = maybe_vectors(b, "data2");
  JoinOptions o;
  o.eps = eps;
  o.metric = parse_metric(metric);
  o.output = JoinOutput::Pairs;
  const TableFormat f = parse_table_format(format);
  RunOptions opt = to_run_options(run);
  const std::size_t sort_pairs = pair_sort_budget();
  nb::dict out;
  nlohmann::json meta = without_gil([&] {
    PairSpool spool(path);
    opt.pair_sink = [&spool](std::span<const PairRecord> batch) { spool.append(batch); };
    opt.max_pairs = std::numeric_limits<std::size_t>::max();
    JoinResult r = similarity_join(va, vb.get(), o, opt);
    nlohmann::json m = metadata(std::move(r.info));
    m["metric"] = metric;
    m["eps"] = eps;
    m["pairs_within_eps"] = r.total;
    write_spooled_pairs(path, spool, "distance", m, f, sort_pairs);
    return m;
  });
  out["total"] = meta["pairs_within_eps"].get<std::uint64_t>();
  out["meta"] = dump(meta);
  return out;
}

// The all-pairs matrix of vectors (twobody/matrices.hpp): in memory (an (n1, n2) float64 array
// over the engine's buffer, no copy) or streamed to `out` (.npy, .h5) a block of rows at a time.
nb::dict matrix_vectors_py(nb::handle a, nb::handle b, const std::string& kernel, double p, const std::string& out,
                           const std::string& dtype, const std::string& summation, const nb::dict& run) {
  const VectorSet va = to_vectors(a, "data");
  const MaybeVectors vb = maybe_vectors(b, "data2");
  MatrixOptions m;
  m.kernel = kernel;
  m.p = p;
  m.output = out;
  m.dtype = parse_matrix_dtype(dtype);
  m.summation = parse_matrix_summation(summation);
  const RunOptions opt = to_run_options(run);
  MatrixResult r = without_gil([&] { return vector_matrix(va, vb.get(), m, opt); });
  nb::dict d;
  nlohmann::json meta = metadata(std::move(r.info));
  meta["kernel"] = r.kernel;
  meta["rows"] = r.rows;
  meta["cols"] = r.cols;
  d["meta"] = dump(meta);
  d["matrix"] = out.empty() ? to_numpy_matrix(std::move(r.values), r.rows, r.cols) : nb::none();
  return d;
}

}  // namespace

VectorSet to_vectors(nb::handle h, const std::string& name) {
  Rows r;
  if (!nb::try_cast(h, r, false))
    throw_input(fmt::format("{}: expected a 2-D float16, float32 or float64 array on the CPU", name));
  const std::optional<Element> e = element_of(r.dtype());
  if (!e) throw_input(fmt::format("{}: vectors must be float16, float32 or float64", name));
  if (r.shape(1) > static_cast<std::size_t>(INT_MAX))
    throw_config(fmt::format("{}: {} dimensions, more than a vector may have", name, r.shape(1)));
  const std::size_t n = r.shape(0);
  const int dim = static_cast<int>(r.shape(1));
  VectorSet v;
  if (const std::size_t stride = borrowable_stride(r, element_bytes(*e))) {
    const void* rows = r.data();
    // The array's reference, dropped with the GIL held whenever the last copy of the set goes.
    auto* kept = new Rows(std::move(r));
    std::shared_ptr<const void> owner(kept, [](const void* k) {
      nb::gil_scoped_acquire gil;
      delete static_cast<const Rows*>(k);
    });
    v = VectorSet::borrow(rows, *e, n, dim, stride, std::move(owner));
    without_gil([&] { v.check_finite(name); });
  } else {
    without_gil([&] {
      v = copied(r, *e, n, dim);
      v.check_finite(name);
    });
  }
  return v;
}

void bind_vectors(nb::module_& m) {
  using namespace nb::literals;
  m.def("join", &join_py, "data"_a, "data2"_a.none(), "eps"_a, "metric"_a, "emit"_a, "run"_a);
  m.def("join_to_file", &join_to_file_py, "data"_a, "data2"_a.none(), "eps"_a, "metric"_a, "path"_a, "format"_a,
        "run"_a);
  m.def("mutual_information", &mutual_information_py, "data"_a, "data2"_a.none(), "bins"_a, "order"_a, "unit"_a,
        "run"_a);
  m.def("knn", &knn_py, "queries"_a, "data2"_a.none(), "k"_a, "metric"_a, "run"_a);
  m.def("matrix_vectors", &matrix_vectors_py, "data"_a, "data2"_a.none(), "kernel"_a, "p"_a, "out"_a, "dtype"_a,
        "summation"_a, "run"_a);
}

}  // namespace twobody::python
