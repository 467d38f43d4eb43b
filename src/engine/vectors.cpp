#include "twobody/vectors.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <memory>
#include <span>

#include "twobody/detail/engine/hash_mix.hpp"
#include "twobody/detail/engine/memory.hpp"
#include "twobody/error.hpp"
#include "twobody/points.hpp"

namespace twobody {

const char* to_string(Element e) {
  switch (e) {
    case Element::F16: return "float16";
    case Element::F32: return "float32";
    case Element::F64: return "float64";
  }
  return "?";
}

std::size_t element_bytes(Element e) { return e == Element::F16 ? 2 : e == Element::F32 ? 4 : 8; }

double half_to_double(std::uint16_t bits) {
  const int sign = bits >> 15, exponent = (bits >> 10) & 0x1f, mantissa = bits & 0x3ff;
  double v;
  if (exponent == 0) v = std::ldexp(static_cast<double>(mantissa), -24);  // zero and subnormals
  else if (exponent == 31) v = mantissa ? std::nan("") : HUGE_VAL;
  else v = std::ldexp(static_cast<double>(mantissa | 0x400), exponent - 25);
  return sign ? -v : v;
}

namespace {

void check_shape(std::size_t values, std::size_t n, int dim, const char* who) {
  if (dim < 1) throw_config(fmt::format("vectors need at least one dimension, not {}", dim));
  if (values != n * static_cast<std::size_t>(dim))
    throw Error(ErrorKind::Internal, fmt::format("{}: {} values for {} rows of {}", who, values, n, dim));
}

template <class T>
VectorSet own_rows(std::vector<T> rows, std::size_t n, int dim, Element e, const char* who) {
  check_shape(rows.size(), n, dim, who);
  auto kept = std::make_shared<std::vector<T>>(std::move(rows));
  const void* data = kept->data();
  VectorSet v = VectorSet::borrow(data, e, n, dim, static_cast<std::size_t>(dim), std::move(kept));
  return v;
}

}  // namespace

VectorSet VectorSet::from_rows(std::vector<double> rows, std::size_t n, int dim) {
  VectorSet v = own_rows(std::move(rows), n, dim, Element::F64, "VectorSet::from_rows");
  v.borrowed_ = false;
  return v;
}

VectorSet VectorSet::from_rows(std::vector<float> rows, std::size_t n, int dim) {
  VectorSet v = own_rows(std::move(rows), n, dim, Element::F32, "VectorSet::from_rows");
  v.borrowed_ = false;
  return v;
}

VectorSet VectorSet::from_half_bits(std::vector<std::uint16_t> rows, std::size_t n, int dim) {
  VectorSet v = own_rows(std::move(rows), n, dim, Element::F16, "VectorSet::from_half_bits");
  v.borrowed_ = false;
  return v;
}

VectorSet VectorSet::borrow(const void* rows, Element e, std::size_t n, int dim, std::size_t row_stride,
                            std::shared_ptr<const void> owner) {
  if (dim < 1) throw_config(fmt::format("vectors need at least one dimension, not {}", dim));
  if (row_stride < static_cast<std::size_t>(dim))
    throw Error(ErrorKind::Internal, fmt::format("VectorSet::borrow: row stride {} below the dimension {}", row_stride, dim));
  VectorSet v;
  v.base_ = static_cast<const unsigned char*>(rows);
  v.n_ = n;
  v.stride_ = row_stride;
  v.dim_ = dim;
  v.element_ = e;
  // (Never null, so that a slice keeps whatever the caller handed over.)
  v.storage_ = owner ? std::move(owner) : std::make_shared<int>(0);
  v.borrowed_ = true;
  return v;
}

VectorSet VectorSet::from_points(const PointSet& p) {
  const int dim = p.dim();
  std::vector<double> rows(p.size() * static_cast<std::size_t>(dim));
  for (int d = 0; d < dim; ++d) {
    const auto c = p.coord(d);
    for (std::size_t i = 0; i < p.size(); ++i) rows[i * static_cast<std::size_t>(dim) + static_cast<std::size_t>(d)] = c[i];
  }
  return from_rows(std::move(rows), p.size(), dim);
}

void VectorSet::row_f64(std::size_t i, double* out) const {
  const void* r = row(i);
  switch (element_) {
    case Element::F64: std::memcpy(out, r, sizeof(double) * static_cast<std::size_t>(dim_)); break;
    case Element::F32: {
      const float* f = static_cast<const float*>(r);
      for (int k = 0; k < dim_; ++k) out[k] = f[k];
      break;
    }
    case Element::F16: {
      const std::uint16_t* h = static_cast<const std::uint16_t*>(r);
      for (int k = 0; k < dim_; ++k) out[k] = half_to_double(h[k]);
      break;
    }
  }
}

VectorSet VectorSet::slice(std::size_t first, std::size_t count) const {
  if (first > n_ || count > n_ - first)
    throw Error(ErrorKind::Internal, fmt::format("VectorSet::slice: rows [{}, {}) of {}", first, first + count, n_));
  VectorSet v = *this;
  v.base_ = static_cast<const unsigned char*>(row(first));
  v.n_ = count;
  return v;
}

PointSet VectorSet::to_points() const {
  if (dim_ > kMaxDim)
    throw_config(fmt::format("{}-D vectors are beyond the point paths ({} coordinates at most)", dim_, kMaxDim));
  // Columns in one buffer left unzeroed and first written in parallel, then read in place
  // (PointSet::borrow: anything that changes the points copies them first). A pair expression
  // routed to the point paths converts its table on every run: 10^6 3-D rows into zeroed vectors
  // on one thread took 25 ms of a 280 ms GPU run, most of it the pages' first touch.
  const std::size_t cells = n_ * static_cast<std::size_t>(dim_);
  require_memory(8.0 * static_cast<double>(cells), fmt::format("{} {}-D vectors as points", n_, dim_));
  std::shared_ptr<double[]> buffer = std::make_shared_for_overwrite<double[]>(std::max<std::size_t>(cells, 1));
  double* const out = buffer.get();
  const std::ptrdiff_t n = static_cast<std::ptrdiff_t>(n_);
#pragma omp parallel if (n_ > 65536)
  {
    std::vector<double> r(static_cast<std::size_t>(dim_));
#pragma omp for schedule(static)
    for (std::ptrdiff_t i = 0; i < n; ++i) {
      row_f64(static_cast<std::size_t>(i), r.data());
      for (int d = 0; d < dim_; ++d) out[static_cast<std::size_t>(d) * n_ + static_cast<std::size_t>(i)] = r[static_cast<std::size_t>(d)];
    }
  }
  std::vector<std::span<const double>> cols;
  for (int d = 0; d < dim_; ++d) cols.emplace_back(out + static_cast<std::size_t>(d) * n_, n_);
  return PointSet::borrow(std::move(cols), std::move(buffer));
}

void VectorSet::check_finite(const std::string& source) const {
  // The first row holding a non-finite value, found in parallel (every file read passes here).
  const std::ptrdiff_t n = static_cast<std::ptrdiff_t>(n_);
  std::ptrdiff_t first = n;
#pragma omp parallel reduction(min : first) if (n_ * static_cast<std::size_t>(dim_) > 100000)
  {
    std::vector<double> r(static_cast<std::size_t>(dim_));
#pragma omp for schedule(static)
    for (std::ptrdiff_t i = 0; i < n; ++i) {
      if (i > first) continue;
      row_f64(static_cast<std::size_t>(i), r.data());
      for (int k = 0; k < dim_; ++k)
        if (!std::isfinite(r[static_cast<std::size_t>(k)])) first = std::min(first, i);
    }
  }
  if (first == n) return;
  std::vector<double> r(static_cast<std::size_t>(dim_));
  row_f64(static_cast<std::size_t>(first), r.data());
  int k = 0;
  while (std::isfinite(r[static_cast<std::size_t>(k)])) ++k;
  throw_input(fmt::format("{}: row {}, column {}: {} (vectors must be finite)", source, first + 1, k + 1,
                          r[static_cast<std::size_t>(k)]));
}

std::uint64_t content_hash(const VectorSet& v) {
  std::uint64_t h = hash_mix(hash_mix(hash_mix(0x766563746f7273ull, static_cast<std::uint64_t>(v.dim())), v.size()),
                             static_cast<std::uint64_t>(v.element()));
  const std::size_t bytes = element_bytes(v.element()) * static_cast<std::size_t>(v.dim());
  for (std::size_t i = 0; i < v.size(); ++i) {
    const auto* p = static_cast<const unsigned char*>(v.row(i));
    std::size_t b = 0;
    for (; b + 8 <= bytes; b += 8) {
      std::uint64_t w;
      std::memcpy(&w, p + b, 8);
      h = hash_mix(h, w);
    }
    std::uint64_t tail = 0;
    if (b < bytes) {
      std::memcpy(&tail, p + b, bytes - b);
      h = hash_mix(h, tail);
    }
  }
  return h;
}

}  // namespace twobody
