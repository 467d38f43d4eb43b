// generate: test catalogues, uniform, clustered or concentrated, in a box or on the sky.
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
};

void add_options(CLI::App& g, GenerateOptions& s) {
  g.add_option("kind", s.kind, "uniform | clustered | concentrated")
      ->required()
      ->check(CLI::IsMember({"uniform", "clustered", "concentrated"}));
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
  g.add_option("-o,--output", s.output, "output file (.npy for NumPy, otherwise text)")->required();
}

void write_catalogue(const GenerateOptions& s, const Context&) {
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
    .help = "write a test catalogue (uniform, clustered or concentrated)",
    .add_options = add_options,
    .run = write_catalogue,
    .examples =
        "  twobody generate clustered -n 100000 --box 1000 --seed 1 -o galaxies.npy\n"
        "  twobody generate uniform --sky -n 200000 --seed 2 -o randoms.txt\n",
};

}  // namespace

std::vector<Subcommand> generate_commands() { return {generate_command}; }

}  // namespace twobody::cli
