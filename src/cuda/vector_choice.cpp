#include "twobody/detail/cuda/vector_choice.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <numeric>
#include <random>
#include <unordered_set>
#include <vector>

#include "twobody/detail/cpu/vector_rows.hpp"
#include "twobody/detail/cuda/gram_knn_rows.hpp"
#include "twobody/detail/cuda/gram_rows.hpp"
#include "twobody/detail/exact/gram_bounds.hpp"

namespace twobody::cuda {

namespace {

// `count` distinct indices of [0, n) in increasing order, the same on every run and machine
// (Floyd's algorithm on a fixed seed; rng() % m rather than a std distribution, whose output the
// standard leaves to the library).
std::vector<std::size_t> sample_indices(std::size_t n, std::size_t count, std::uint64_t seed) {
  std::vector<std::size_t> out;
  if (count >= n) {
    out.resize(n);
    std::iota(out.begin(), out.end(), std::size_t{0});
    return out;
  }
  std::mt19937_64 rng(seed);
  std::unordered_set<std::size_t> taken;
  for (std::size_t j = n - count; j < n; ++j) {
    const std::size_t t = static_cast<std::size_t>(rng() % (j + 1));
    taken.insert(taken.count(t) ? j : t);
  }
  out.assign(taken.begin(), taken.end());
  std::sort(out.begin(), out.end());
  return out;
}

// Sampled rows promoted to float64, and the bound's inputs about a centre: n (norm_upper) and σ,
// and for the bound in distance space m ≈ ‖ĥ‖ and ρ ≈ ‖ĥ − x'‖ of the row's FP16 rounding (an
// estimate's, not the tiles' rigorous terms); a row out of the FP16 path's range gets n = m = ∞
// (every pair of it undecided).
struct SampledRows {
  std::vector<std::size_t> index;
  std::vector<double> x;  // rows x d
  std::vector<double> norm_up, sigma, m, rho;
};

// The sampled rows as the rule reads them: promoted, and for the cosine distance normalised (a row
// without a direction is left as it is: the run itself refuses it).
SampledRows load(const VectorSet& v, std::vector<std::size_t> index, bool cosine) {
  SampledRows s;
  const std::size_t d = static_cast<std::size_t>(v.dim());
  s.x.resize(index.size() * d);
  for (std::size_t r = 0; r < index.size(); ++r) {
    double* x = s.x.data() + r * d;
    v.row_f64(index[r], x);
    const double norm = cosine ? cpu::cosine_rule_norm(x, v.dim()) : 1.0;
    if (cosine && norm > 0 && std::isfinite(norm))
      for (std::size_t k = 0; k < d; ++k) x[k] /= norm;
  }
  s.index = std::move(index);
  return s;
}

void bound_inputs(SampledRows& s, const std::vector<double>& centre) {
  const std::size_t d = centre.size(), n = s.index.size();
  s.norm_up.resize(n);
  s.sigma.resize(n);
  s.m.resize(n);
  s.rho.resize(n);
  for (std::size_t r = 0; r < n; ++r) {
    double mx = 0, ss = 0;
    for (std::size_t k = 0; k < d; ++k) {
      const double v = s.x[r * d + k] - centre[k];
      mx = std::max(mx, std::fabs(v));
      ss += v * v;
    }
    const bool fits = gram_row_fits(mx, ss);
    s.norm_up[r] = fits ? exact::norm_upper(ss, static_cast<int>(d)) : HUGE_VAL;
    s.sigma[r] = fits ? gram_row_scale(mx) : 1.0;
    double hat = 0, err = 0;
    for (std::size_t k = 0; fits && k < d; ++k) {
      const double v = s.x[r * d + k] - centre[k], h = half_value(half_bits(s.sigma[r] * v)) / s.sigma[r];
      hat += h * h;
      err += (h - v) * (h - v);
    }
    const GramKnnRowTerms t = gram_knn_row_terms(hat, err, ss, static_cast<int>(d));  // (the tiles' finish)
    s.m[r] = fits ? t.rounded_norm : HUGE_VAL;
    s.rho[r] = fits ? t.rounding : HUGE_VAL;
  }
}

// Whether a pair of key `key` and bound `e` would most likely be undecided: s̃ lies within E of
// key64 (measured: within E/5 at d >= 128, tests/cuda_gram_bound_test.cpp), so the pair is
// undecided when key64 lies within E of an edge. NaN counts as undecided.
bool undecided(double key, double e, const exact::GramRange& r) {
  return !(std::fabs(key - r.limit_hi) > e) || (r.has_lo && !(std::fabs(key - r.limit_lo) > e));
}

// The same for the tiles on the bound in distance space (exact::gram_knn_thresholds): s̃ lies near
// key64 there too, so the pair is undecided when key64 lies in an edge's band (gram_knn_band).
bool undecided_in_distance_space(double key, const exact::GramKnnBound& b, const exact::GramRange& r) {
  const auto in_band = [&](double limit) {
    const exact::GramKnnBand band = exact::gram_knn_band(limit, b);
    return !(key <= band.in_start) && !(key > band.out_start);  // (NaN: undecided)
  };
  return std::isnan(key) || in_band(r.limit_hi) || (r.has_lo && in_band(r.limit_lo));
}

std::string pairs_text(double pairs) { return fmt::format("{:.3g}", pairs); }

}  // namespace

double gram_pair_seconds(const TuningPolicy& p, int d) {
  // At d = 128 the epilogue and the 8 MMAs of a fragment share the measured time; above it the
  // MMAs (one per 16 coordinates) are taken to grow it in proportion (a bound from above).
  return p.gram_pair_seconds_d128 * std::max(1.0, std::ceil(d / 16.0) / 8.0);
}

double fp64_pair_seconds(const TuningPolicy& p, int d) {
  // The two measured rates, and between them a rate linear in log d.
  const double lo = p.fp64_coordinates_per_second_d128, hi = p.fp64_coordinates_per_second_d960;
  if (d <= 128) return d / lo;
  if (d >= 960) return d / hi;
  const double x = std::log(d / 128.0) / std::log(960.0 / 128.0);
  return d / (lo * std::pow(hi / lo, x));
}

double settle_pair_seconds(const TuningPolicy& p, int d) { return 16.0 * d / p.settle_bytes_per_second; }

PrecisionChoice choose_precision(const VectorSet& a, const VectorSet* b, double lo, double hi, Metric m,
                                 const TuningPolicy& policy, int threads) {
  const bool cosine = m == Metric::Cosine;
  using P = TuningPolicy::VectorPrecision;
  PrecisionChoice c;
  const int dim = a.dim();
  const VectorSet& bb = b ? *b : a;
  const double na = static_cast<double>(a.size()), nb = static_cast<double>(bb.size());
  const double pairs = b ? na * nb : na * (na - 1) / 2;
  c.pairs = static_cast<std::uint64_t>(pairs);
  c.seconds_fp64 = pairs * fp64_pair_seconds(policy, dim);
  c.seconds_gram = pairs * gram_pair_seconds(policy, dim);
  if (policy.vector_precision == P::Fp16) {
    c.gram = true;
    c.why = "FP16 forced";
    return c;
  }
  if (policy.vector_precision == P::Fp64) {
    c.why = "float64 forced";
    return c;
  }
  if (dim < policy.gram_min_dim) {
    c.why = fmt::format("d = {} < {}: the float64 kernel is the cheaper", dim, policy.gram_min_dim);
    return c;
  }
  if (pairs < policy.sample_min_pairs) {
    c.gram = true;
    c.why = fmt::format("{} pairs, too few for a sample to pay (below {}): the Gram tiles from d = {}", c.pairs,
                        pairs_text(policy.sample_min_pairs), policy.gram_min_dim);
    return c;
  }

  // The sample: queries of the first set against partners of the second (or the same set, a row
  // never against itself), as many as the host's budget of float64 coordinates allows.
  std::size_t q = std::min<std::size_t>(static_cast<std::size_t>(std::max(policy.sample_queries, 1)), a.size());
  std::size_t p = std::min<std::size_t>(static_cast<std::size_t>(std::max(policy.sample_partners, 1)), bb.size());
  while (static_cast<double>(q) * static_cast<double>(p) * dim > policy.sample_coordinates) {
    if (q > 64)
      q /= 2;
    else if (p > 256)
      p /= 2;
    else
      break;
  }
  SampledRows sq = load(a, sample_indices(a.size(), q, 0x51ed27a3c0ffee01ull), cosine);
  SampledRows sp = load(bb, sample_indices(bb.size(), p, 0x2545f4914f6cdd1dull), cosine);
  const std::size_t d = static_cast<std::size_t>(dim);
  // The bound's norms about the sample's own centre (the run's, of all rows, is the device's); the
  // cosine distance's rows are not centred.
  std::vector<double> centre(d, 0.0);
  if (!cosine) {
    for (const SampledRows* s : {&sq, &sp})
      for (std::size_t r = 0; r < s->index.size(); ++r)
        for (std::size_t k = 0; k < d; ++k) centre[k] += s->x[r * d + k];
    for (double& v : centre) v /= static_cast<double>(sq.index.size() + sp.index.size());
  }
  bound_inputs(sq, centre);
  bound_inputs(sp, centre);

  // The keys by the CPU's own rule loop (cpu/vector_rows.hpp): the partners transposed in one
  // block, four queries by eight partners in registers, each pair's sum over k in stored order.
  const std::size_t np = sp.index.size(), nq = sq.index.size();
  const VectorSet partners = VectorSet::from_rows(sp.x, np, dim);
  const cpu::RuleRows partner_rows(partners, Metric::Euclidean, 1, "");  // (as loaded: normalised already)
  cpu::PartnerBlock block(dim, np);
  block.load(partner_rows, 0, np);
  // (The cosine distance in the tiles' units: 2·key against twice the range, 2E.)
  const exact::GramRange range = cosine ? exact::gram_cosine_range(lo, hi) : exact::gram_range(lo, hi);
  const double unit = cosine ? 2.0 : 1.0;
  const bool distance_space = !cosine && policy.gram_distance_space;  // (as vector_runs.cpp decides)
  const exact::GramFormat format = exact::fp16_gram(policy.gram_fold_for(dim));  // the joins' tiles' (gram_join_format)
  constexpr std::size_t kQueries = 4;
  std::uint64_t sampled = 0, open = 0;
  const auto groups = static_cast<std::ptrdiff_t>((nq + kQueries - 1) / kQueries);
#pragma omp parallel num_threads(std::max(threads, 1)) reduction(+ : sampled, open)
  {
    std::vector<double> key(kQueries * np);
#pragma omp for schedule(dynamic, 1)
    for (std::ptrdiff_t gg = 0; gg < groups; ++gg) {
      const std::size_t r0 = static_cast<std::size_t>(gg) * kQueries, rows = std::min(kQueries, nq - r0);
      if (rows == kQueries) {
        const double* const q[kQueries] = {&sq.x[r0 * d], &sq.x[(r0 + 1) * d], &sq.x[(r0 + 2) * d], &sq.x[(r0 + 3) * d]};
        block.keys<kQueries>(m, q, 0, np, key.data(), np);
      } else {
        for (std::size_t t = 0; t < rows; ++t) block.keys(m, &sq.x[(r0 + t) * d], 0, np, key.data() + t * np);
      }
      for (std::size_t t = 0; t < rows; ++t) {
        const std::size_t r = r0 + t;
        for (std::size_t j = 0; j < np; ++j) {
          if (!b && sq.index[r] == sp.index[j]) continue;
          ++sampled;
          const double ni = sq.norm_up[r], nj = sp.norm_up[j], si = sq.sigma[r], sj = sp.sigma[j];
          if (distance_space) {
            open += undecided_in_distance_space(
                key[t * np + j], exact::gram_knn_bound(format, dim, sq.m[r], sp.m[j], sq.rho[r], sp.rho[j], ni, nj),
                range);
            continue;
          }
          const double e = cosine ? exact::gram_cosine_bound(format, dim, ni, nj, si, sj)
                                  : exact::gram_distance_bound(format, dim, ni, nj, si, sj);
          open += undecided(unit * key[t * np + j], e, range);
        }
      }
    }
  }
  c.sampled = true;
  c.sample_queries = static_cast<int>(nq);
  c.sample_partners = static_cast<int>(np);
  c.sample_pairs = sampled;
  c.sample_undecided = open;
  c.undecided_fraction = sampled ? static_cast<double>(open) / static_cast<double>(sampled) : 0.0;
  c.seconds_settle = c.undecided_fraction * pairs * settle_pair_seconds(policy, dim);
  c.seconds_gram += c.seconds_settle;
  c.gram = c.seconds_gram <= c.seconds_fp64;
  c.why = fmt::format(
      "a sample of {} pairs ({} x {}): {:.3g}% undecided (key within the FP16 bound of the range's edge), so "
      "FP16 Gram tiles {:.3g} s (of which settling {} undecided pairs {:.3g} s) against the float64 kernel {:.3g} s",
      sampled, nq, np, 100 * c.undecided_fraction, c.seconds_gram, pairs_text(c.undecided_fraction * pairs),
      c.seconds_settle, c.seconds_fp64);
  return c;
}

}  // namespace twobody::cuda
