#include "correlation_options.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <fstream>
#include <iostream>

#include "twobody/cosmology.hpp"
#include "twobody/error.hpp"

namespace twobody::cli {

void add_jackknife_options(CLI::App& cmd, JackknifeOptions& jk, const char* estimator_help) {
  auto* col = cmd.add_option("--regions-column", jk.region_column,
                             "1-based column of integer jackknife region labels (every catalogue)")
                  ->check(positive_number);
  // No range check here: N < 2 is a request error (exit 4) that says why.
  cmd.add_option("--jackknife", jk.regions,
                 "jackknife errors over N regions assigned automatically: k-means on the random catalogues (sky: "
                 "spherical; open space: Euclidean), so regions hold equal areas of the footprint; on the data "
                 "without randoms; a periodic box: equal cells")
      ->excludes(col);
  cmd.add_option("--estimator", jk.estimator, estimator_help)
      ->check(CLI::IsMember({"natural", "davis-peebles", "hamilton", "landy-szalay"}));
  cmd.add_option("--covariance", jk.covariance, "write the jackknife covariance matrix (text) to FILE");
}

void add_counts_options(CLI::App& cmd, CountsFiles& f) {
  cmd.add_option("--save-counts", f.save,
                 "write DD, DR, RR, their normalisations, the bins and any jackknife region counts to FILE (JSON)");
  cmd.add_option("--rr", f.rr,
                 "take RR (and its normalisation and region counts) from a --save-counts FILE of a run with the "
                 "same bins, space, box, weighting and regions instead of counting it (a cross-correlation: R1R2, "
                 "from a cross-correlation's file)");
}

void add_cross_options(CLI::App& cmd, EstimatorOptions& e) {
  cmd.add_option("--data2", e.data2,
                 "second sample: the cross-correlation of --data and --data2 (D1D2, D1R2, R1D2, R1R2), each with "
                 "its own random catalogues");
  cmd.add_option("--randoms2", e.randoms2, "random catalogue of the second sample (repeat for several)");
}

void add_mock_options(CLI::App& cmd, MockOptions& m) {
  cmd.add_flag("--mocks", m.mocks,
               "survey mocks: the columns are RA, Dec (degrees), cz (km/s), the line of sight each pair's midpoint "
               "(Corrfunc's *_mocks); open space only");
  cmd.add_option("--omega-m", m.omega_m,
                 "with --mocks: Omega_m of the flat LCDM cosmology turning cz into comoving distance");
  cmd.add_option("--cosmology", m.cosmology,
                 "with --mocks: Corrfunc's presets, 1 LasDamas (Omega_m 0.25), 2 Planck (0.302)")
      ->check(CLI::IsMember({1, 2}));
  cmd.add_option("--speed-of-light", m.speed_of_light,
                 "with --mocks: c in km/s for z = cz/c (default 299792.458; Corrfunc 299800)");
  cmd.add_flag("--comoving", m.comoving, "with --mocks: the third column is already the comoving distance in Mpc/h");
}

JackknifeRequest jackknife_request(const JackknifeOptions& jk) {
  JackknifeRequest r;
  r.use_labels = jk.region_column > 0;
  r.regions = jk.region_column > 0 || jk.regions == JackknifeOptions::kNotGiven ? 0 : jk.regions;
  if (jk.region_column == 0 && jk.regions != JackknifeOptions::kNotGiven && jk.regions < 2)
    throw_config(fmt::format("--jackknife {}: a jackknife needs at least 2 regions", jk.regions));
  r.estimator = parse_estimator(jk.estimator);
  return r;
}

ReusedCounts reused_counts(const CountsFiles& f, std::optional<SavedCounts>& rr) {
  ReusedCounts r;
  if (!f.rr.empty()) {
    rr = read_counts(f.rr);
    r.rr = &*rr;
  }
  return r;
}

std::vector<std::string> estimator_inputs(const EstimatorOptions& e) {
  std::vector<std::string> files = e.randoms;
  files.insert(files.end(), e.randoms2.begin(), e.randoms2.end());
  files.push_back(e.data2);
  return files;
}

std::vector<PointSet> load_randoms(const CommonOptions& o, const EstimatorOptions& e, const char* columns_default) {
  std::vector<PointSet> r;
  for (const auto& path : e.randoms)
    r.push_back(load_points(path, o.columns, o.weight_column, columns_default, e.jk.region_column));
  return r;
}

void to_cartesian(PointSet& p, const MockOptions& m, const std::optional<Box>& box) {
  if (!m.mocks) {
    if (m.comoving || m.omega_m >= 0 || m.cosmology != 0 || m.speed_of_light != 299792.458)
      throw_config("--omega-m, --cosmology, --speed-of-light and --comoving go with --mocks");
    return;
  }
  if (box) throw_config("--mocks takes open space: a periodic box has no observer (drop --box)");
  FlatLcdm c;
  if (!m.comoving) {
    if ((m.omega_m >= 0) == (m.cosmology != 0))
      throw_config("--mocks turns cz into comoving distance: give one of --omega-m and --cosmology (or --comoving)");
    c = m.cosmology != 0 ? FlatLcdm::corrfunc(m.cosmology) : FlatLcdm{m.omega_m};
    c.speed_of_light = m.speed_of_light;
  }
  p = sky_to_cartesian(p, c, m.comoving);
}

void place(PointSet& data, std::vector<PointSet>& randoms, const CommonOptions& o, const MockOptions& m,
           const std::optional<Box>& box) {
  to_cartesian(data, m, box);
  for (auto& p : randoms) to_cartesian(p, m, box);
  if (box && o.wrap) {
    wrap_into_box(data, *box);
    for (auto& p : randoms) wrap_into_box(p, *box);
  }
}

SecondSample second_sample(const CommonOptions& o, const MockOptions& m, const EstimatorOptions& e,
                           const char* columns_default, const std::optional<Box>& box) {
  SecondSample s{load_points(e.data2, o.columns, o.weight_column, columns_default, e.jk.region_column), {}};
  for (const auto& path : e.randoms2)
    s.randoms.push_back(load_points(path, o.columns, o.weight_column, columns_default, e.jk.region_column));
  place(s.data, s.randoms, o, m, box);
  return s;
}

void write_covariance(const std::string& path, const std::string& header, const std::vector<double>& cov,
                      std::size_t n) {
  write_output(path, [&](std::ostream& out) {
    out << header;
    for (std::size_t k = 0; k < n; ++k) {
      for (std::size_t l = 0; l < n; ++l) out << (l ? " " : "") << fmt::format("{}", cov[k * n + l]);
      out << '\n';
    }
  });
}

std::string edges_line(const char* name, const Binning& b) {
  std::string s = fmt::format("# {} edges:", name);
  for (double e : b.edges()) s += fmt::format(" {}", e);
  return s + '\n';
}

nlohmann::json jackknife_meta(const JackknifeResult& j, const std::vector<double>& samples,
                              const std::vector<double>& covariance, std::size_t n) {
  nlohmann::json cov = nlohmann::json::array(), rows = nlohmann::json::array();
  for (std::size_t k = 0; k < n; ++k)
    cov.push_back(std::vector<double>(covariance.begin() + k * n, covariance.begin() + (k + 1) * n));
  for (std::size_t q = 0; q < j.regions; ++q)
    rows.push_back(std::vector<double>(samples.begin() + q * n, samples.begin() + (q + 1) * n));
  nlohmann::json m = {{"estimator", to_string(j.estimator)},
                      {"regions", j.regions},
                      {"layout", j.layout},
                      {"n_data", j.n_data},
                      {"n_randoms", j.n_randoms},
                      {"samples", rows},
                      {"covariance", cov}};
  if (!j.labels.empty()) m["labels"] = j.labels;
  return m;
}

void note_region_layout(const JackknifeResult& j, const JackknifeOptions& jk) {
  if (static_cast<int>(j.regions) != jk.regions && jk.regions > 0)
    std::cerr << "twobody: note: jackknife regions: " << j.layout << '\n';
  if (j.fitted_on_data)
    std::cerr << "twobody: note: jackknife regions fitted on the data (no random catalogues to fit them on): on "
                 "clustered data they are unequal in area\n";
  std::vector<std::string> empty;
  for (std::size_t r = 0; r < j.n_data.size(); ++r)
    if (j.n_data[r] == 0) empty.push_back(j.labels.empty() ? std::to_string(r) : std::to_string(j.labels[r]));
  if (!empty.empty())
    std::cerr << fmt::format("twobody: note: jackknife region{} {} of {} hold{} no data points: leaving {} out removes "
                             "random points only (fewer regions, or --regions-column, spread the data)\n",
                             empty.size() > 1 ? "s" : "", fmt::join(empty, ", "), j.regions,
                             empty.size() > 1 ? "" : "s", empty.size() > 1 ? "one" : "it");
}

}  // namespace twobody::cli
