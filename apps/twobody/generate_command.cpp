// generate: test catalogues, uniform, clustered or concentrated, in a box or on the sky, and
// random catalogues matched to a data catalogue's footprint (randoms --like DATA).
#include <fmt/format.h>

#include <iostream>

#include "commands.hpp"
#include "twobody/error.hpp"
#include "twobody/generate.hpp"
#include "twobody/io.hpp"

namespace twobody::cli {

namespace {

struct GenerateOptions {
  std::string kind, output, cluster = "soneira-peebles";
  std::size_t n = 100000;
  int dim = 3;
  double side = 1000.0;
  std::uint64_t seed = 1;
  bool sky = false;
  ClusterOptions c;
  double fraction = 0.9, volume = 0.01;
  // randoms --like DATA
  std::string like, columns;
  int weight_column = 0;
  bool mocks = false;
  double resolution = 1.0;
  std::size_t min_count = 1;
  const CLI::App* app = nullptr;  // for which options were given
};

void add_options(CLI::App& g, GenerateOptions& s) {
  s.app = &g;
  g.add_option("kind", s.kind, "uniform | clustered | concentrated | randoms (uniform over --like's footprint)")
      ->required()
      ->check(CLI::IsMember({"uniform", "clustered", "concentrated", "randoms"}));
  g.add_option("-n,--npoints", s.n, "number of points")->check(positive_number);
  g.add_option("--dim", s.dim, "dimension (box catalogues)")->check(CLI::Range(1, kMaxDim));
  g.add_option("--box", s.side, "box side; points lie in [0, side)^dim")->check(positive_number);
  g.add_flag("--sky", s.sky, "points on the sphere, written as RA Dec in degrees");
  g.add_option("--seed", s.seed, "random seed (same seed, same catalogue)");
  g.add_option("--cluster", s.cluster, "soneira-peebles | blobs")->check(CLI::IsMember({"soneira-peebles", "blobs"}));
  g.add_option("--blobs", s.c.blobs, "blobs: number of Gaussian blobs");
  g.add_option("--sigma", s.c.sigma, "blobs: width, fraction of the side (radians on the sky)");
  g.add_option("--eta", s.c.eta, "soneira-peebles: sub-clusters per level");
  g.add_option("--lambda", s.c.lambda, "soneira-peebles: radius ratio between levels");
  g.add_option("--levels", s.c.levels, "soneira-peebles: levels");
  g.add_option("--radius", s.c.radius, "soneira-peebles: top radius, fraction of the side (radians on the sky)");
  g.add_option("--fraction", s.fraction, "concentrated: fraction of the points in the cube")
      ->check(CLI::Range(0.0, 1.0));
  g.add_option("--volume", s.volume, "concentrated: the cube's volume, fraction of the box");
  g.add_option("--like", s.like,
               "randoms: the data catalogue whose footprint they fill (box: --box L, else its bounding box; "
               "--sky: its equal-area pixel mask; --mocks: the mask, radial column drawn from the data's)");
  g.add_option("--columns", s.columns, "randoms: --like's coordinate columns (default: 3, --sky 2, --mocks 3)");
  g.add_option("--weights-column", s.weight_column,
               "randoms: --like's weight column (randoms are unweighted; --mocks randoms take the weight of the "
               "data point lending the radial value)")
      ->check(positive_number);
  g.add_flag("--mocks", s.mocks,
             "randoms: --like holds RA, Dec (degrees), cz or redshift: angles over the sky mask, the third "
             "column drawn from the data's values with replacement (the \"shuffled\" randoms)");
  g.add_option("--resolution", s.resolution, "randoms --sky/--mocks: the mask's pixel side in degrees (default 1)")
      ->check(positive_number);
  g.add_option("--min-count", s.min_count, "randoms --sky/--mocks: data points that put a pixel in the mask (default 1)")
      ->check(positive_number);
  g.add_option("-o,--output", s.output, "output file (.npy for NumPy, otherwise text)")->required();
}

// randoms --like DATA: read as the correlation commands read a catalogue, then drawn uniformly
// over its footprint; where, on stderr.
void write_randoms(const GenerateOptions& s) {
  const CLI::App& g = *s.app;
  if (s.like.empty()) throw_config("generate randoms needs --like DATA: the catalogue whose footprint they fill");
  if (s.sky && s.mocks) throw_config("give --sky (RA, Dec) or --mocks (RA, Dec, radial), not both");
  if (g.count("--dim")) throw_config("randoms take the dimension of --like's catalogue: drop --dim (or choose --columns)");
  RandomsLike how;
  how.footprint = s.mocks ? RandomsLike::Footprint::Mocks
                  : s.sky ? RandomsLike::Footprint::Sky
                          : RandomsLike::Footprint::Box;
  how.resolution_deg = s.resolution;
  how.min_count = s.min_count;
  if (!s.sky && !s.mocks && (g.count("--resolution") || g.count("--min-count")))
    throw_config("--resolution and --min-count set the sky mask: they go with --sky or --mocks");
  if ((s.sky || s.mocks) && g.count("--box")) throw_config("--box is for randoms in a box, not with --sky or --mocks");
  const PointSet data = load_points(s.like, s.columns, s.weight_column, s.sky ? "1,2" : "");
  if (g.count("--box")) how.box.assign(static_cast<std::size_t>(data.dim()), s.side);
  GeneratedRandoms r = generate_randoms_like(data, s.n, how, s.seed);
  std::cerr << fmt::format("twobody: note: randoms: {}\n", r.note);
  write_points(s.output, r.points);
}

void write_catalogue(const GenerateOptions& s, const Context&) {
  if (s.kind == "randoms") return write_randoms(s);
  for (const char* only : {"--like", "--columns", "--weights-column", "--mocks", "--resolution", "--min-count"})
    if (s.app->count(only))
      throw_config(fmt::format("{} goes with generate randoms, not generate {}", only, s.kind));
  ClusterOptions c = s.c;
  c.kind = s.cluster == "blobs" ? ClusterOptions::Kind::GaussianBlobs : ClusterOptions::Kind::SoneiraPeebles;
  if (s.kind == "concentrated") {
    if (s.sky) throw_config("concentrated catalogues lie in a box, not on the sky");
    write_points(s.output, generate_concentrated_box(s.n, s.dim, s.side, s.fraction, s.volume, s.seed));
    return;
  }
  const PointSet p = s.kind == "uniform"
                         ? (s.sky ? generate_uniform_sky(s.n, s.seed) : generate_uniform_box(s.n, s.dim, s.side, s.seed))
                         : (s.sky ? generate_clustered_sky(s.n, c, s.seed)
                                  : generate_clustered_box(s.n, s.dim, s.side, c, s.seed));
  write_points(s.output, p);
}

// No common options: a catalogue is written, not read, and no pairs are counted.
const Command<GenerateOptions> generate_command{
    .name = "generate",
    .help = "write a test catalogue (uniform, clustered or concentrated), or randoms matched to a catalogue",
    .add_options = add_options,
    .run = write_catalogue,
    .examples =
        "  twobody generate clustered -n 100000 --box 1000 --seed 1 -o galaxies.npy\n"
        "  twobody generate uniform --sky -n 200000 --seed 2 -o randoms.txt\n"
        "  twobody generate clustered --sky -n 20000 --seed 3 -o sky_galaxies.txt\n"
        "  twobody generate randoms --like sky_galaxies.txt --sky -n 100000 --seed 4 -o sky_randoms.txt\n"
        "  twobody generate randoms --like galaxies.npy --box 1000 -n 200000 --seed 5 -o box_randoms.npy\n",
};

}  // namespace

std::vector<Subcommand> generate_commands() { return {generate_command}; }

}  // namespace twobody::cli
