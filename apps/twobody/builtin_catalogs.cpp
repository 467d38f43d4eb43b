#include "builtin_catalogs.hpp"

#include <fmt/format.h>

#include "twobody/error.hpp"
#include "twobody/generate.hpp"

namespace twobody::cli {

PointSet builtin_catalog(const std::string& spec) {
  std::string name = spec;
  std::size_t n = 100000;
  if (const auto colon = spec.find(':'); colon != std::string::npos) {
    name = spec.substr(0, colon);
    try {
      n = std::stoull(spec.substr(colon + 1));
    } catch (const std::exception&) {
      throw_config(fmt::format("builtin:{}: the size after ':' must be a number", spec));
    }
  }
  constexpr std::uint64_t seed = 20261122;
  if (name == "clustered-sky") return generate_clustered_sky(n, ClusterOptions{}, seed);
  if (name == "uniform-sky") return generate_uniform_sky(n, seed);
  if (name == "clustered-box") return generate_clustered_box(n, 3, 1000.0, ClusterOptions{}, seed);
  if (name == "uniform-box") return generate_uniform_box(n, 3, 1000.0, seed);
  throw_config(fmt::format("unknown built-in catalogue '{}' (clustered-sky, uniform-sky, "
                           "clustered-box, uniform-box)", name));
}

}  // namespace twobody::cli
