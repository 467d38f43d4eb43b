// Reading speed: twobody's readers on one file, timed the way a user meets them (the whole
// read_points call: open, parse or map, convert, check), best of `repeats`.
// Usage: twobody_read_bench FILE [REPEATS] [COLUMNS]   -> "seconds MB/s points"
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <string>

#include "twobody/error.hpp"
#include "twobody/io.hpp"

int main(int argc, char** argv) {
  if (argc < 2) {
    std::fprintf(stderr, "usage: twobody_read_bench FILE [REPEATS] [COLUMNS]\n");
    return 2;
  }
  const std::string path = argv[1];
  const int repeats = argc > 2 ? std::atoi(argv[2]) : 3;
  twobody::ReadOptions opt;
  if (argc > 3) opt.columns = twobody::parse_column_list(argv[3]);
  double best = 1e300;
  std::size_t n = 0;
  try {
    for (int r = 0; r < repeats; ++r) {
      const auto t0 = std::chrono::steady_clock::now();
      const twobody::PointSet p = twobody::read_points(path, opt);
      best = std::min(best, std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count());
      n = p.size();
    }
  } catch (const twobody::Error& e) {
    std::fprintf(stderr, "%s\n", e.what());
    return e.exit_code();
  }
  const double mb = static_cast<double>(std::filesystem::file_size(path)) / 1e6;
  std::printf("%.4f %.1f %zu\n", best, mb / best, n);
  return 0;
}
