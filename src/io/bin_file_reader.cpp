// Corrfunc's bin files ("lo hi" a line, consecutive bins touching): Binning::from_file.
#include <fmt/format.h>

#include <cmath>
#include <fstream>
#include <sstream>

#include "twobody/binning.hpp"
#include "twobody/error.hpp"

namespace twobody {

Binning Binning::from_file(const std::string& path) {
  std::ifstream in(path);
  if (!in) throw_input(fmt::format("{}: cannot open bin file", path));
  std::vector<double> e;
  std::string line;
  std::size_t lineno = 0;
  while (std::getline(in, line)) {
    ++lineno;
    const auto hash = line.find('#');
    if (hash != std::string::npos) line.resize(hash);
    std::istringstream ss(line);
    double lo, hi;
    if (!(ss >> lo)) continue;  // blank line
    std::string rest;
    if (!(ss >> hi) || (ss >> rest))
      throw_input(fmt::format("{}:{}: a bin line needs two numbers, 'lo hi'", path, lineno));
    if (!std::isfinite(lo) || !std::isfinite(hi))
      throw_input(fmt::format("{}:{}: bin edges must be finite", path, lineno));
    if (e.empty()) {
      e.push_back(lo);
    } else if (lo != e.back()) {
      throw_config(fmt::format("{}:{}: bin starts at {} but the previous bin ends at {}", path,
                               lineno, lo, e.back()));
    }
    e.push_back(hi);
  }
  if (e.empty()) throw_input(fmt::format("{}: the bin file holds no bins", path));
  try {
    return from_edges(std::move(e));
  } catch (const Error& err) {
    throw Error(err.kind(), fmt::format("{}: {}", path, err.what()));
  }
}

}  // namespace twobody
