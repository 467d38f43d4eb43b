// Counts pairs of a generated catalogue through the installed library.
#include <twobody/generate.hpp>
#include <twobody/statistics.hpp>

#include <cstdio>

int main() {
  const auto p = twobody::generate_uniform_box(2000, 3, 10.0, 42);
  const auto r = twobody::paircount(p, nullptr, twobody::Binning::linear(0.0, 5.0, 5), twobody::Box::cube(3, 10.0), false);
  unsigned long long total = 0;
  for (auto c : r.raw.counts) total += c;
  std::printf("%llu pairs within 5 on %s\n", total, r.raw.info.backend.c_str());
  return total > 0 ? 0 : 1;
}
