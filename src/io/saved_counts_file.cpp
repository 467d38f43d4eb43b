// Saved correlation counts as a file: one JSON document a run (nlohmann), read back to reuse RR;
// 1-D bins (xi, wtheta) or 2-D bins (xi-rppi, wp, xi-smu).
#include <fmt/format.h>

#include <charconv>

#include <ostream>
#include <nlohmann/json.hpp>

#include "twobody/clustering2d.hpp"
#include "twobody/correlation.hpp"
#include "twobody/io.hpp"
#include "twobody/detail/io/raw_table.hpp"
#include "twobody/error.hpp"

namespace twobody {

namespace {

constexpr const char* kFormatName = "twobody-counts";

const char* space_key(CorrelationSpace s) {
  return s == CorrelationSpace::Box ? "box" : s == CorrelationSpace::Open ? "open" : "sky";
}

const char* los_key(LineOfSight l) { return l == LineOfSight::PairMidpoint ? "pair-midpoint" : "z-axis"; }

// The 2-D bins as the values they are made from (the inner edges follow from π_max and n_π, or
// μ_max and n_μ, exactly).
nlohmann::json bins2d_json(const Binning2D& b) {
  if (b.kind() == Binning2D::Kind::RpPi)
    return {{"kind", "rppi"},
            {"rp_edges", b.outer().edges()},
            {"pimax", b.inner().hi()},
            {"npibins", b.inner().nbins()},
            {"line_of_sight", los_key(b.line_of_sight())}};
  return {{"kind", "smu"},
          {"s_edges", b.outer().edges()},
          {"mu_max", b.inner().hi()},
          {"nmu_bins", b.inner().nbins()},
          {"line_of_sight", los_key(b.line_of_sight())}};
}

Binning2D bins2d_of(const nlohmann::json& j, const std::string& path) {
  const std::string kind = j.at("kind").get<std::string>(), los = j.at("line_of_sight").get<std::string>();
  if (los != los_key(LineOfSight::ZAxis) && los != los_key(LineOfSight::PairMidpoint))
    throw_input(fmt::format("{}: unknown line of sight '{}'", path, los));
  const LineOfSight l = los == los_key(LineOfSight::ZAxis) ? LineOfSight::ZAxis : LineOfSight::PairMidpoint;
  if (kind == "rppi")
    return Binning2D::rp_pi(Binning::from_edges(j.at("rp_edges").get<std::vector<double>>()), j.at("pimax").get<double>(),
                            j.at("npibins").get<std::size_t>(), l);
  if (kind == "smu")
    return Binning2D::s_mu(Binning::from_edges(j.at("s_edges").get<std::vector<double>>()), j.at("mu_max").get<double>(),
                           j.at("nmu_bins").get<std::size_t>(), l);
  throw_input(fmt::format("{}: unknown 2-D bins '{}' (rppi or smu)", path, kind));
}

}  // namespace

void write_counts(const std::string& path, const SavedCounts& c) {
  const std::string statistic = std::string(c.binning2d.active()
                                                ? (c.binning2d.kind() == Binning2D::Kind::RpPi ? "xi-rppi" : "xi-smu")
                                            : c.space == CorrelationSpace::Sky ? "wtheta"
                                                                               : "xi") +
                                (c.cross ? "-cross" : "");
  nlohmann::json j = {{"format", kFormatName},
                      {"version", c.cross ? SavedCounts::kFormatVersion : 1},
                      {"statistic", statistic},
                      {"cross", c.cross},
                      {"space", space_key(c.space)},
                      {"weighted", c.weighted},
                      {"n_data", c.n_data},
                      {"n_randoms", c.n_randoms},
                      {"randoms_hash", fmt::format("{:016x}", c.randoms_hash)},
                      {"norm_dd", c.norm_dd},
                      {"norm_dr", c.norm_dr},
                      {"norm_rr", c.norm_rr},
                      {"dd", c.dd},
                      {"dr", c.dr},
                      {"rr", c.rr}};
  if (c.cross) {
    j["n_data2"] = c.n_data2;
    j["norm_rd"] = c.norm_rd;
    j["rd"] = c.rd;
    if (c.weighted) j["wrd"] = c.wrd;
  }
  if (c.binning2d.active()) j["bins2d"] = bins2d_json(c.binning2d);
  else j["edges"] = c.binning.edges();
  // A triclinic cell as its matrix (rows a, b, c), under its own key: a reader that knows only
  // "box" refuses the file rather than reading the diagonal as an orthorhombic box.
  if (c.box && c.box->triclinic()) {
    const Box& b = *c.box;
    j["box_cell"] = std::vector<double>{b.length[0], 0, 0, b.xy, b.length[1], 0, b.xz, b.yz, b.length[2]};
  } else if (c.box) {
    j["box"] = std::vector<double>(c.box->length.begin(), c.box->length.begin() + c.box->dim);
  }
  if (c.weighted) {
    j["wdd"] = c.wdd;
    j["wdr"] = c.wdr;
    j["wrr"] = c.wrr;
  }
  if (c.jackknife) {
    const JackknifeResult& k = *c.jackknife;
    j["jackknife"] = {{"regions", k.regions},    {"layout", k.layout}, {"labels", k.labels},
                      {"n_data", k.n_data},      {"n_randoms", k.n_randoms},
                      {"dd", k.dd},              {"dr", k.dr},         {"rr", k.rr},
                      {"norm_dd", k.norm_dd},    {"norm_dr", k.norm_dr}, {"norm_rr", k.norm_rr}};
    // Sky regions by k-means: the centres, so that a run reusing this RR takes the same regions.
    if (!k.centres.empty()) j["jackknife"]["centres"] = k.centres;
    if (c.weighted) {
      j["jackknife"]["wdd"] = k.wdd;
      j["jackknife"]["wdr"] = k.wdr;
      j["jackknife"]["wrr"] = k.wrr;
    }
    if (c.cross) {
      j["jackknife"]["rd"] = k.rd;
      j["jackknife"]["norm_rd"] = k.norm_rd;
      if (c.weighted) j["jackknife"]["wrd"] = k.wrd;
    }
  }
  write_output(path, [&](std::ostream& out) { out << j.dump(1) << '\n'; });
}

SavedCounts read_counts(const std::string& path) {
  // Read whole, not through std::ifstream: the Python module's readers avoid iostreams (std::locale
  // crashed inside the module on the device machine; npy_reader.cpp says more).
  const std::string text = read_whole_file(path);
  SavedCounts c;
  try {
    const nlohmann::json j = nlohmann::json::parse(text);
    if (!j.is_object() || j.value("format", "") != kFormatName)
      throw_input(fmt::format("{}: not a twobody counts file (no \"format\": \"{}\")", path, kFormatName));
    const int version = j.at("version").get<int>();
    if (version < 1 || version > SavedCounts::kFormatVersion)
      throw_input(fmt::format("{}: counts format version {}, this twobody reads versions 1 to {}", path, version,
                              SavedCounts::kFormatVersion));
    const std::string space = j.at("space").get<std::string>();
    if (space == "box") c.space = CorrelationSpace::Box;
    else if (space == "open") c.space = CorrelationSpace::Open;
    else if (space == "sky") c.space = CorrelationSpace::Sky;
    else throw_input(fmt::format("{}: unknown space '{}'", path, space));
    if (j.contains("box")) {
      const auto len = j.at("box").get<std::vector<double>>();
      c.box = Box::from_lengths(len);
    }
    if (j.contains("box_cell")) c.box = Box::from_matrix(j.at("box_cell").get<std::vector<double>>());
    c.weighted = j.at("weighted").get<bool>();
    c.cross = j.value("cross", false);  // (files from before cross-correlations were saved: auto)
    if (j.contains("bins2d")) c.binning2d = bins2d_of(j.at("bins2d"), path);
    else c.binning = Binning::from_edges(j.at("edges").get<std::vector<double>>());
    c.n_data = j.at("n_data").get<std::size_t>();
    c.n_randoms = j.at("n_randoms").get<std::size_t>();
    if (j.contains("randoms_hash")) {
      const std::string h = j.at("randoms_hash").get<std::string>();
      const auto [p, ec] = std::from_chars(h.data(), h.data() + h.size(), c.randoms_hash, 16);
      if (ec != std::errc() || p != h.data() + h.size() || h.size() != 16)
        throw_input(fmt::format("{}: randoms_hash '{}' is not 16 hexadecimal digits", path, h));
    }
    c.norm_dd = j.at("norm_dd").get<double>();
    c.norm_dr = j.at("norm_dr").get<double>();
    c.norm_rr = j.at("norm_rr").get<double>();
    const std::size_t nb = c.binning2d.active() ? c.binning2d.nbins() : c.binning.nbins();
    const auto sized = [&](const nlohmann::json& o, const char* key, std::size_t n, auto& v) {
      o.at(key).get_to(v);
      if (v.size() != n) throw_input(fmt::format("{}: '{}' has {} values, expected {}", path, key, v.size(), n));
    };
    sized(j, "dd", nb, c.dd);
    sized(j, "dr", nb, c.dr);
    sized(j, "rr", nb, c.rr);
    if (c.weighted) {
      sized(j, "wdd", nb, c.wdd);
      sized(j, "wdr", nb, c.wdr);
      sized(j, "wrr", nb, c.wrr);
    }
    if (c.cross) {
      c.n_data2 = j.at("n_data2").get<std::size_t>();
      c.norm_rd = j.at("norm_rd").get<double>();
      sized(j, "rd", nb, c.rd);
      if (c.weighted) sized(j, "wrd", nb, c.wrd);
    }
    if (j.contains("jackknife")) {
      const nlohmann::json& o = j.at("jackknife");
      JackknifeResult k;
      k.regions = o.at("regions").get<std::size_t>();
      k.layout = o.at("layout").get<std::string>();
      o.at("labels").get_to(k.labels);
      const std::size_t R = k.regions;
      sized(o, "n_data", R, k.n_data);
      sized(o, "n_randoms", R, k.n_randoms);
      sized(o, "dd", R * nb, k.dd);
      sized(o, "dr", R * nb, k.dr);
      sized(o, "rr", R * nb, k.rr);
      sized(o, "norm_dd", R, k.norm_dd);
      sized(o, "norm_dr", R, k.norm_dr);
      sized(o, "norm_rr", R, k.norm_rr);
      if (o.contains("centres")) sized(o, "centres", R, k.centres);  // (files from before: none)
      if (c.weighted) {
        sized(o, "wdd", R * nb, k.wdd);
        sized(o, "wdr", R * nb, k.wdr);
        sized(o, "wrr", R * nb, k.wrr);
      }
      if (c.cross) {
        sized(o, "rd", R * nb, k.rd);
        sized(o, "norm_rd", R, k.norm_rd);
        if (c.weighted) sized(o, "wrd", R * nb, k.wrd);
      }
      c.jackknife = std::move(k);
    }
  } catch (const nlohmann::json::exception& e) {
    throw_input(fmt::format("{}: not a readable counts file: {}", path, e.what()));
  }
  return c;
}

}  // namespace twobody
