#include "twobody/jackknife.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <map>
#include <random>

#include "twobody/error.hpp"

namespace twobody {

namespace {

using Vec3 = std::array<double, 3>;
using SpaceVec = std::array<double, kMaxDim>;

double dot(const Vec3& a, const Vec3& b) { return a[0] * b[0] + a[1] * b[1] + a[2] * b[2]; }

int nearest(const Vec3& p, const std::vector<Vec3>& c) {
  int best = 0;
  double bd = -std::numeric_limits<double>::infinity();
  for (std::size_t k = 0; k < c.size(); ++k) {
    const double d = dot(p, c[k]);
    if (d > bd) {
      bd = d;
      best = static_cast<int>(k);
    }
  }
  return best;
}

Vec3 normalised(const Vec3& v) {
  const double n = std::sqrt(dot(v, v));
  return n > 0 ? Vec3{v[0] / n, v[1] / n, v[2] / n} : v;
}

}  // namespace

namespace {

// The two geometries k-means runs in. Sky: unit vectors, distance the chord (2 − 2 cos), the
// nearest centre the largest dot product, a centre the normalised mean. Space: Euclidean, the
// nearest centre the smallest squared distance, a centre the mean. `closeness` orders points by how
// near they are to a centre (larger: nearer), for moving an emptied centre to the farthest point.
struct SkyGeometry {
  using Vec = Vec3;
  int dim = 3;
  double dist2(const Vec& a, const Vec& b) const { return std::max(0.0, 2 - 2 * dot(a, b)); }
  double closeness(const Vec& a, const Vec& b) const { return dot(a, b); }
  int nearest_of(const Vec& p, const std::vector<Vec>& c) const { return nearest(p, c); }
  Vec centre(const Vec& sum, std::size_t) const { return normalised(sum); }
};

struct SpaceGeometry {
  using Vec = SpaceVec;
  int dim = 3;
  double dist2(const Vec& a, const Vec& b) const {
    double s = 0;
    for (int d = 0; d < dim; ++d) s += (a[d] - b[d]) * (a[d] - b[d]);
    return s;
  }
  double closeness(const Vec& a, const Vec& b) const { return -dist2(a, b); }
  int nearest_of(const Vec& p, const std::vector<Vec>& c) const {
    int best = 0;
    double bd = std::numeric_limits<double>::infinity();
    for (std::size_t k = 0; k < c.size(); ++k) {
      const double d = dist2(p, c[k]);
      if (d < bd) {
        bd = d;
        best = static_cast<int>(k);
      }
    }
    return best;
  }
  Vec centre(const Vec& sum, std::size_t count) const {
    Vec c{};
    for (int d = 0; d < dim; ++d) c[d] = sum[d] / static_cast<double>(count);
    return c;
  }
};

// k-means++ then Lloyd on `pts` (at least n distinct), in geometry G, from `seed`.
template <class G>
std::vector<typename G::Vec> fit_kmeans(const std::vector<typename G::Vec>& pts, int n, std::uint64_t seed,
                                        const G& g) {
  using Vec = typename G::Vec;
  const std::size_t m = pts.size();
  // k-means++: each next centre drawn with probability proportional to its squared distance to
  // the nearest centre so far.
  std::mt19937_64 rng(seed);
  std::vector<Vec> c;
  c.push_back(pts[std::uniform_int_distribution<std::size_t>(0, m - 1)(rng)]);
  std::vector<double> d2(m);
  for (std::size_t i = 0; i < m; ++i) d2[i] = g.dist2(pts[i], c[0]);
  while (static_cast<int>(c.size()) < n) {
    double total = 0;
    for (double x : d2) total += x;
    double pick = std::uniform_real_distribution<double>(0, total)(rng);
    std::size_t chosen = m;
    for (std::size_t i = 0; i < m; ++i) {
      if (d2[i] <= 0) continue;
      chosen = i;
      pick -= d2[i];
      if (pick <= 0) break;
    }
    c.push_back(pts[chosen]);
    for (std::size_t i = 0; i < m; ++i) d2[i] = std::min(d2[i], g.dist2(pts[i], c.back()));
  }
  // Lloyd: each centre the mean of its points, until no point changes region. An emptied centre
  // moves to the point farthest from its own centre.
  std::vector<int> label(m, -1);
  for (int iter = 0; iter < 300; ++iter) {
    bool changed = false;
    const auto ms = static_cast<std::ptrdiff_t>(m);
#pragma omp parallel for reduction(|| : changed) schedule(static)
    for (std::ptrdiff_t i = 0; i < ms; ++i) {
      const int k = g.nearest_of(pts[i], c);
      changed = changed || k != label[i];
      label[i] = k;
    }
    if (!changed) break;
    std::vector<Vec> sum(n, Vec{});
    std::vector<std::size_t> count(n, 0);
    for (std::size_t i = 0; i < m; ++i) {
      for (int d = 0; d < g.dim; ++d) sum[label[i]][d] += pts[i][d];
      ++count[label[i]];
    }
    for (int k = 0; k < n; ++k) {
      if (count[k]) {
        c[k] = g.centre(sum[k], count[k]);
        continue;
      }
      std::size_t far = 0;
      double worst = std::numeric_limits<double>::infinity();
      for (std::size_t i = 0; i < m; ++i) {
        const double d = g.closeness(pts[i], c[label[i]]);
        if (d < worst && count[label[i]] > 1) {
          worst = d;
          far = i;
        }
      }
      --count[label[far]];
      label[far] = k;
      count[k] = 1;
      c[k] = pts[far];
    }
  }
  return c;
}

// The even-stride sample k-means is fitted on (0: 1000 a region, at least 20 000), after checking
// that it holds at least n distinct points.
template <class Vec>
std::vector<Vec> kmeans_sample(const PointSet& p, int n, std::size_t max_sample) {
  if (n < 2) throw_config(fmt::format("a jackknife needs at least 2 regions, not {}", n));
  if (max_sample == 0) max_sample = std::max<std::size_t>(20000, 1000 * static_cast<std::size_t>(n));
  const std::size_t stride = std::max<std::size_t>(1, (p.size() + max_sample - 1) / max_sample);
  std::vector<Vec> pts;
  for (std::size_t i = 0; i < p.size(); i += stride) {
    Vec v{};
    for (int d = 0; d < p.dim(); ++d) v[d] = p.coord(d)[i];
    pts.push_back(v);
  }
  std::vector<Vec> distinct = pts;
  std::sort(distinct.begin(), distinct.end());
  const auto k = static_cast<std::size_t>(std::unique(distinct.begin(), distinct.end()) - distinct.begin());
  if (k < static_cast<std::size_t>(n))
    throw_config(fmt::format("{} jackknife regions asked for, but the data have only {} distinct positions{}", n, k,
                             stride > 1 ? " in the k-means sample" : ""));
  return pts;
}

}  // namespace

std::vector<std::array<double, 3>> sky_region_centres(const PointSet& u, int n, std::uint64_t seed,
                                                      std::size_t max_sample) {
  if (n < 2) throw_config(fmt::format("a jackknife needs at least 2 regions, not {}", n));
  if (u.dim() != 3) throw_config("sky regions are found on unit vectors (3 coordinates)");
  return fit_kmeans(kmeans_sample<Vec3>(u, n, max_sample), n, seed, SkyGeometry{});
}

std::vector<std::array<double, kMaxDim>> space_region_centres(const PointSet& p, int n, std::uint64_t seed,
                                                              std::size_t max_sample) {
  if (n < 2) throw_config(fmt::format("a jackknife needs at least 2 regions, not {}", n));
  if (p.dim() < 1 || p.dim() > kMaxDim) throw_config(fmt::format("space regions need 1 to {} coordinates", kMaxDim));
  return fit_kmeans(kmeans_sample<SpaceVec>(p, n, max_sample), n, seed, SpaceGeometry{p.dim()});
}

std::vector<std::int32_t> nearest_space_centre(const PointSet& p, const std::vector<std::array<double, kMaxDim>>& centres) {
  const SpaceGeometry g{p.dim()};
  std::vector<std::int32_t> l(p.size());
  const auto n = static_cast<std::ptrdiff_t>(p.size());
#pragma omp parallel for schedule(static)
  for (std::ptrdiff_t i = 0; i < n; ++i) {
    SpaceVec v{};
    for (int d = 0; d < p.dim(); ++d) v[d] = p.coord(d)[i];
    l[i] = g.nearest_of(v, centres);
  }
  return l;
}

std::vector<std::int32_t> nearest_centre(const PointSet& u, const std::vector<std::array<double, 3>>& centres) {
  std::vector<std::int32_t> l(u.size());
  const auto x = u.coord(0), y = u.coord(1), z = u.coord(2);
  const auto n = static_cast<std::ptrdiff_t>(u.size());
#pragma omp parallel for schedule(static)
  for (std::ptrdiff_t i = 0; i < n; ++i) l[i] = nearest({x[i], y[i], z[i]}, centres);
  return l;
}

int CellLayout::total() const {
  int t = 1;
  for (int c : cells) t *= c;
  return t;
}

std::string CellLayout::describe() const {
  std::string s = fmt::format("{} = ", total());
  for (std::size_t d = 0; d < cells.size(); ++d) s += fmt::format("{}{}", d ? "x" : "", cells[d]);
  s += " equal cells of ";
  for (std::size_t d = 0; d < cells.size(); ++d) s += fmt::format("{}[{}, {})", d ? " x " : "", lo[d], hi[d]);
  if (requested != total())
    s += fmt::format(" (asked for {} regions: no layout of {} gives cells within 2:1, {} is the nearest count that does)",
                     requested, requested, total());
  return s;
}

namespace {

// The most cube-like factorisation of n over the dimensions of non-zero extent, and its aspect
// (longest cell side over shortest).
std::pair<std::vector<int>, double> best_factorisation(int n, const std::vector<double>& len) {
  const std::size_t D = len.size();
  std::vector<int> cur(D, 1), best;
  double best_aspect = std::numeric_limits<double>::infinity();
  const auto aspect = [&](const std::vector<int>& c) {
    double lo = std::numeric_limits<double>::infinity(), hi = 0;
    for (std::size_t d = 0; d < D; ++d) {
      if (len[d] <= 0) continue;
      lo = std::min(lo, len[d] / c[d]);
      hi = std::max(hi, len[d] / c[d]);
    }
    return hi / lo;
  };
  const auto rec = [&](auto&& self, std::size_t d, int left) -> void {
    if (d == D) {
      if (left != 1) return;
      const double a = aspect(cur);
      if (a < best_aspect) {
        best_aspect = a;
        best = cur;
      }
      return;
    }
    if (len[d] <= 0) {
      cur[d] = 1;
      self(self, d + 1, left);
      return;
    }
    for (int f = 1; f <= left; ++f)
      if (left % f == 0) {
        cur[d] = f;
        self(self, d + 1, left / f);
      }
    cur[d] = 1;
  };
  rec(rec, 0, n);
  return {best, best_aspect};
}

}  // namespace

CellLayout cell_layout(int n, const std::vector<double>& lo, const std::vector<double>& hi) {
  if (n < 2) throw_config(fmt::format("a jackknife needs at least 2 regions, not {}", n));
  if (n > 1000000) throw_config(fmt::format("{} jackknife regions is more than the 10^6 supported", n));
  std::vector<double> len(lo.size());
  bool any = false;
  for (std::size_t d = 0; d < lo.size(); ++d) {
    len[d] = hi[d] - lo[d];
    any = any || len[d] > 0;
  }
  if (!any) throw_config("the points all lie at one position: no cells to cut them into regions");
  CellLayout L;
  L.requested = n;
  L.lo = lo;
  L.hi = hi;
  // n itself, then n−1, n+1, n−2, ... (never below 2); the first within 2:1 wins, the lower count
  // on a tie of distance.
  for (int step = 0; step <= n; ++step) {
    for (int cand : {n - step, n + step}) {
      if (cand < 2) continue;
      auto [cells, aspect] = best_factorisation(cand, len);
      if (!cells.empty() && aspect <= 2.0 + 1e-12) {
        L.cells = cells;
        return L;
      }
    }
  }
  // No count near n works (a very elongated extent): n's own best layout.
  L.cells = best_factorisation(n, len).first;
  return L;
}

std::vector<std::int32_t> cell_regions(const PointSet& p, const CellLayout& L) {
  if (static_cast<std::size_t>(p.dim()) != L.cells.size())
    throw_config(fmt::format("the region cells are {}-D but the points are {}-D", L.cells.size(), p.dim()));
  std::vector<std::int32_t> r(p.size(), 0);
  for (int d = 0; d < p.dim(); ++d) {
    const auto x = p.coord(d);
    const double lo = L.lo[d], len = L.hi[d] - L.lo[d];
    const int n = L.cells[d];
    for (std::size_t i = 0; i < p.size(); ++i) {
      int c = len > 0 ? static_cast<int>(std::floor((x[i] - lo) / len * n)) : 0;
      c = std::clamp(c, 0, n - 1);
      r[i] = r[i] * n + c;
    }
  }
  return r;
}

RegionNumbering number_regions(const PointSet& data) {
  if (!data.has_regions()) throw_config("the data carry no region labels");
  RegionNumbering m;
  m.labels.assign(data.regions().begin(), data.regions().end());
  std::sort(m.labels.begin(), m.labels.end());
  m.labels.erase(std::unique(m.labels.begin(), m.labels.end()), m.labels.end());
  if (!m.labels.empty() && m.labels.front() < 0)
    throw_input(fmt::format("region label {} is negative", m.labels.front()));
  if (m.labels.size() < 2)
    throw_input(fmt::format("the data hold {} region label(s); a jackknife needs at least 2 regions", m.labels.size()));
  return m;
}

std::vector<std::int32_t> RegionNumbering::number(const PointSet& p, const std::string& which) const {
  if (!p.has_regions()) throw_config(fmt::format("{}: no region labels (every catalogue needs them)", which));
  std::vector<std::int32_t> out(p.size());
  const auto r = p.regions();
  for (std::size_t i = 0; i < p.size(); ++i) {
    const auto it = std::lower_bound(labels.begin(), labels.end(), r[i]);
    if (it == labels.end() || *it != r[i])
      throw_input(fmt::format("{}: point {} has region label {}, which no data point has (a region without data)",
                              which, i + 1, r[i]));
    out[i] = static_cast<std::int32_t>(it - labels.begin());
  }
  return out;
}

JackknifeSummary jackknife_summary(const std::vector<double>& x, std::size_t R, std::size_t nb) {
  JackknifeSummary s;
  s.mean.assign(nb, 0.0);
  s.sigma.assign(nb, 0.0);
  s.covariance.assign(nb * nb, 0.0);
  for (std::size_t r = 0; r < R; ++r)
    for (std::size_t k = 0; k < nb; ++k) s.mean[k] += x[r * nb + k];
  for (auto& m : s.mean) m /= static_cast<double>(R);
  const double f = static_cast<double>(R - 1) / static_cast<double>(R);
  for (std::size_t r = 0; r < R; ++r)
    for (std::size_t k = 0; k < nb; ++k)
      for (std::size_t l = 0; l < nb; ++l)
        s.covariance[k * nb + l] += (x[r * nb + k] - s.mean[k]) * (x[r * nb + l] - s.mean[l]);
  for (auto& c : s.covariance) c *= f;
  for (std::size_t k = 0; k < nb; ++k) s.sigma[k] = std::sqrt(s.covariance[k * nb + k]);
  return s;
}

}  // namespace twobody
