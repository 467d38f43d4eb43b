#include <cstring>
#include <span>
#include "twobody/points.hpp"

#include <cmath>
#include <tuple>
#include <fmt/format.h>

#include "twobody/detail/engine/first_where.hpp"
#include "twobody/detail/engine/hash_mix.hpp"
#include "twobody/detail/engine/memory.hpp"
#include "twobody/error.hpp"

namespace twobody {

namespace {

void check_dimension(int dim) {
  if (dim < 1 || dim > kMaxDim)
    throw_config(fmt::format("points must have 1 to {} coordinates, not {}", kMaxDim, dim));
}

// The points' number of columns checked, and their common length.
template <class Columns>
std::size_t common_length(const Columns& columns, const char* who) {
  check_dimension(static_cast<int>(columns.size()));
  for (const auto& c : columns)
    if (c.size() != columns[0].size()) throw Error(ErrorKind::Internal, fmt::format("{}: columns of different lengths", who));
  return columns[0].size();
}

}  // namespace

PointSet::PointSet(int dim, std::size_t n) : dim_(dim), n_(n) {
  check_dimension(dim);
  require_memory(8.0 * dim * static_cast<double>(n), fmt::format("a set of {} {}-D points", n, dim));
  coords_.assign(dim, std::vector<double>(n));
  float_.resize(dim);
}

PointSet PointSet::from_columns(std::vector<std::vector<double>> columns) {
  PointSet p;
  p.n_ = common_length(columns, "PointSet::from_columns");
  p.dim_ = static_cast<int>(columns.size());
  p.coords_ = std::move(columns);
  p.float_.resize(p.dim_);
  return p;
}

PointSet PointSet::borrow(std::vector<std::span<const double>> columns, std::shared_ptr<const void> owner) {
  PointSet p;
  p.n_ = common_length(columns, "PointSet::borrow");
  p.dim_ = static_cast<int>(columns.size());
  p.coords_.resize(p.dim_);
  for (const auto& c : columns) p.borrowed_.push_back(c.data());
  // (Never null, so that borrowed() holds even for an owner the caller did not need.)
  p.owner_ = owner ? std::move(owner) : std::make_shared<int>(0);
  p.float_.resize(p.dim_);
  return p;
}

void PointSet::own() {
  require_memory(8.0 * dim_ * static_cast<double>(n_), fmt::format("a set of {} {}-D points", n_, dim_));
  for (int d = 0; d < dim_; ++d) coords_[d].assign(borrowed_[d], borrowed_[d] + n_);
  borrowed_.clear();
  owner_.reset();
}

void PointSet::set_weights(std::vector<double> w) {
  if (!w.empty() && w.size() != n_)
    throw_input(fmt::format("{} weights given for {} points", w.size(), n_));
  weights_ = std::move(w);
}

void PointSet::set_regions(std::vector<std::int32_t> r) {
  if (!r.empty() && r.size() != n_)
    throw_input(fmt::format("{} region labels given for {} points", r.size(), n_));
  regions_ = std::move(r);
}

std::span<const float> PointSet::float_view(int d) const {
  auto& f = float_[d];
  if (f.size() != n_) {
    const auto x = coord(d);
    f.assign(x.begin(), x.end());
  }
  return f;
}

void PointSet::push_back(std::span<const double> x) {
  if (static_cast<int>(x.size()) != dim_)
    throw_input(fmt::format("point with {} coordinates added to a {}-D set", x.size(), dim_));
  if (owner_) own();
  for (int d = 0; d < dim_; ++d) coords_[d].push_back(x[d]);
  ++n_;
  for (auto& f : float_) f.clear();
}

namespace {
std::size_t first_non_finite(const double* x, std::size_t n) {
  return first_where(x, n, [](double v) { return !std::isfinite(v); });
}
}  // namespace

void PointSet::check_finite(const std::string& source) const {
  // The first point with a bad coordinate, and its first such coordinate, as a scan point by point
  // would report it.
  std::size_t point = n_;
  int dim = 0;
  for (int d = 0; d < dim_; ++d)
    if (const std::size_t i = first_non_finite(coord(d).data(), n_); i < point) {
      point = i;
      dim = d;
    }
  if (point < n_)
    throw_input(fmt::format("{}: point {} has a non-finite coordinate {} ({})", source, point + 1, dim + 1, coord(dim)[point]));
  if (const std::size_t i = first_non_finite(weights_.data(), weights_.size()); i < weights_.size())
    throw_input(fmt::format("{}: point {} has a non-finite weight", source, i + 1));
}

PointSet PointSet::concat(const PointSet& a, const PointSet& b) {
  if (a.dim() != b.dim())
    throw_config(fmt::format("cannot join a {}-D and a {}-D point set", a.dim(), b.dim()));
  PointSet c(a.dim(), a.size() + b.size());
  for (int d = 0; d < a.dim(); ++d) {
    std::copy(a.coord(d).begin(), a.coord(d).end(), c.coords_[d].begin());
    std::copy(b.coord(d).begin(), b.coord(d).end(), c.coords_[d].begin() + a.size());
  }
  if (a.has_weights() && b.has_weights()) {
    std::vector<double> w(a.weights_);
    w.insert(w.end(), b.weights_.begin(), b.weights_.end());
    c.set_weights(std::move(w));
  }
  return c;
}

std::pair<double, double> joint_range(const PointSet& a, const PointSet& b, int d) {
  double lo = HUGE_VAL, hi = -HUGE_VAL;
  const PointSet* sets[2] = {&a, &b};
  for (int s = 0; s < (&a == &b ? 1 : 2); ++s) {  // auto: one set
    const PointSet* p = sets[s];
    const double* x = p->coord(d).data();
    const std::ptrdiff_t n = static_cast<std::ptrdiff_t>(p->size());
#pragma omp parallel for simd reduction(min : lo) reduction(max : hi) if (n > 100000)
    for (std::ptrdiff_t i = 0; i < n; ++i) {
      lo = x[i] < lo ? x[i] : lo;
      hi = x[i] > hi ? x[i] : hi;
    }
  }
  return {lo, hi};
}

Frame Frame::of(const PointSet& a, const PointSet& b) {
  Frame f;
  f.dim = a.dim();
  for (int d = 0; d < f.dim; ++d) std::tie(f.lo[d], f.hi[d]) = joint_range(a, b, d);
  return f;
}

Frame Frame::grown(double fraction) const {
  Frame f = *this;
  for (int d = 0; d < dim; ++d) {
    const double m = fraction * (hi[d] - lo[d]);
    f.lo[d] -= m;
    f.hi[d] += m;
  }
  return f;
}

bool Frame::holds(const Frame& f) const {
  if (f.dim != dim) return false;
  for (int d = 0; d < dim; ++d)
    if (!(f.lo[d] >= lo[d] && f.hi[d] <= hi[d])) return false;
  return true;
}

Frame Frame::joined(const Frame& f) const {
  Frame j = *this;
  for (int d = 0; d < dim; ++d) {
    j.lo[d] = std::min(lo[d], f.lo[d]);
    j.hi[d] = std::max(hi[d], f.hi[d]);
  }
  return j;
}

namespace {
template <class T>
std::uint64_t mix_all(std::uint64_t h, std::span<const T> values) {
  for (const T& v : values) {
    std::uint64_t bits = 0;
    std::memcpy(&bits, &v, sizeof(T));
    h = hash_mix(h, bits);
  }
  return h;
}
}  // namespace

std::uint64_t content_hash(const PointSet& p) {
  std::uint64_t h = hash_mix(hash_mix(0x74776f626f6479ull, static_cast<std::uint64_t>(p.dim())), p.size());
  for (int d = 0; d < p.dim(); ++d) h = mix_all(h, p.coord(d));
  h = hash_mix(h, p.has_weights());
  if (p.has_weights()) h = mix_all(h, p.weights());
  h = hash_mix(h, p.has_regions());
  if (p.has_regions()) h = mix_all(h, p.regions());
  return h;
}

std::uint64_t content_hash(const std::vector<const PointSet*>& sets) {
  std::uint64_t h = hash_mix(0x72616e646f6d73ull, sets.size());
  for (const PointSet* p : sets) h = hash_mix(h, content_hash(*p));
  return h;
}

}  // namespace twobody
