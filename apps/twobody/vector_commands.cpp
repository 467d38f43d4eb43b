// The vector commands (twobody/joins.hpp): join (every pair within eps) and knn (the k nearest
// neighbours), over vectors of any dimension read as stored (.npy, .fvecs/.bvecs/.ivecs, HDF5,
// text) or the points of a built-in catalogue.
#include <fmt/format.h>

#include <limits>
#include <optional>

#include "commands.hpp"
#include "mpi_session.hpp"
#include "twobody/error.hpp"
#include "twobody/joins.hpp"
#include "twobody/table.hpp"

namespace twobody::cli {

VectorSet load_vectors(const std::string& spec, const std::string& columns) {
  if (spec.rfind("builtin:", 0) == 0) return VectorSet::from_points(load_points(spec, columns, 0, ""));
  ReadOptions r;
  if (!columns.empty()) r.columns = parse_column_list(columns);
  return read_vectors(spec, r);
}

namespace {

// Options of the point statistics that mean nothing here: bins, ranges, boxes, weights.
void remove_binning_options(CLI::App& cmd) {
  for (const char* name : {"--bins", "--rmin", "--rmax", "--nbins", "--log"})
    if (CLI::Option* o = cmd.get_option_no_throw(name)) cmd.remove_option(o);
}

Metric parse_metric(const std::string& m) { return m == "cosine" ? Metric::Cosine : Metric::Euclidean; }

// --data and, when given, --data2 (its columns: --columns2, else --columns).
struct VectorSets {
  VectorSet a, b;
  bool cross = false;
  const VectorSet* second() const { return cross ? &b : nullptr; }
};
VectorSets load_vector_sets(const CommonOptions& o) {
  VectorSets v;
  v.a = load_vectors(o.data, o.columns);
  v.cross = !o.data2.empty();
  if (v.cross) v.b = load_vectors(o.data2, o.columns2.empty() ? o.columns : o.columns2);
  return v;
}

struct JoinCommandOptions {
  CommonOptions o;
  double eps = 0;
  std::string metric = "euclidean";
  std::string emit = "pairs";
  std::string precision = "auto";
};

JoinOutput parse_join_output(const std::string& e) {
  if (e == "csr") return JoinOutput::Csr;
  if (e == "counts") return JoinOutput::Counts;
  if (e == "total") return JoinOutput::Total;
  return JoinOutput::Pairs;
}

void run_join(const JoinCommandOptions& s, const Context& c) {
  const CommonOptions& o = s.o;
  const BackendWarmUp warm(o);
  const VectorSets sets = load_vector_sets(o);
  const bool cross = sets.cross;
  JoinOptions j;
  j.eps = s.eps;
  j.metric = parse_metric(s.metric);
  j.output = parse_join_output(s.emit);
  RunOptions run = make_run_options(o, c.bar);
  run.precision = s.precision;
  // Pairs stream to a temporary file beside the output as the run finds them, then into the
  // output's format: a join larger than memory (the disk is the limit).
  std::optional<PairSpool> spool;
  const std::size_t sort_limit = pair_sort_budget();
  if (j.output == JoinOutput::Pairs && cli_writes_output()) {
    spool.emplace(o.output);
    run.pair_sink = [&spool](std::span<const PairRecord> batch) { spool->append(batch); };
    run.max_pairs = std::numeric_limits<std::size_t>::max();
  }
  JoinResult r = similarity_join(sets.a, sets.second(), j, run);
  c.bar.finish();
  if (!cli_writes_output()) return;
  nlohmann::json meta = run_metadata(r.info);
  meta["eps"] = s.eps;
  meta["metric"] = s.metric;
  meta["pairs_within_eps"] = r.total;
  const TableFormat format = output_format(o);
  if (spool) return write_spooled_pairs(o.output, *spool, "distance", meta, format, sort_limit);
  if (j.output == JoinOutput::Csr) {
    if (format != TableFormat::Npz && format != TableFormat::Hdf5)
      throw_config("--emit csr writes the arrays indptr, indices, distances: give -o FILE.npz or FILE.h5");
    write_arrays_file(o.output,
                      {{"indptr", std::move(r.indptr)}, {"indices", std::move(r.indices)}, {"distances", std::move(r.distances)}},
                      format);
    return;
  }
  Table t;
  t.meta = meta;
  if (j.output == JoinOutput::Pairs) {
    std::vector<std::uint64_t> i, jj;
    std::vector<double> d;
    i.reserve(r.pairs.size());
    jj.reserve(r.pairs.size());
    d.reserve(r.pairs.size());
    for (const PairRecord& p : r.pairs) {
      i.push_back(p.i);
      jj.push_back(p.j);
      d.push_back(p.value);
    }
    t.columns = {{"i", std::move(i)}, {"j", std::move(jj)}, {"distance", std::move(d)}};
  } else if (j.output == JoinOutput::Counts) {
    std::vector<std::uint64_t> set, index, count;
    const auto add = [&](const std::vector<std::uint64_t>& counts, std::uint64_t which) {
      for (std::size_t k = 0; k < counts.size(); ++k) {
        set.push_back(which);
        index.push_back(k);
        count.push_back(counts[k]);
      }
    };
    add(r.counts, 1);
    if (cross) add(r.counts_b, 2);
    t.columns = {{"set", std::move(set)}, {"index", std::move(index)}, {"count", std::move(count)}};
  } else {
    t.columns = {{"pairs", std::vector<std::uint64_t>{r.total}}};
  }
  emit(t, o);
}

const Command<JoinCommandOptions> join_command{
    .name = "join",
    .help = "similarity join: every pair of vectors within eps (euclidean or cosine), exact, self or cross, any dimension",
    .features = {.weights = false, .box = false},
    .add_options =
        [](CLI::App& cmd, JoinCommandOptions& s) {
          remove_binning_options(cmd);
          cmd.get_option("--data")->description(
              "vectors: .npy (2-D float16/32/64), .fvecs/.bvecs/.ivecs, file.h5:/dataset, text (one vector a line), or builtin:...");
          cmd.add_option("--eps", s.eps, "pairs within this distance, inclusive (0: exact duplicates)")
              ->required()
              ->check(non_negative_number);
          cmd.add_option("--metric", s.metric, "euclidean | cosine (1 - a.b of the rows normalised)")
              ->check(CLI::IsMember({"euclidean", "cosine"}));
          cmd.add_option("--emit", s.emit,
                         "pairs (i, j, distance; each unordered pair once for a self-join) | csr (neighbour lists: "
                         "indptr, indices, distances in .npz/.h5) | counts (per vector) | total")
              ->check(CLI::IsMember({"pairs", "csr", "counts", "total"}));
          cmd.add_option("--precision", s.precision,
                         "GPU arithmetic of joins (Euclidean and cosine), exact either way: auto (the cheaper, by a sample of the "
                         "pairs) | fp16 (tensor-core Gram tiles, pairs near eps settled in float64) | fp64")
              ->check(CLI::IsMember({"auto", "fp16", "fp64"}));
        },
    .run = run_join,
    .examples =
        "  twobody join --data builtin:clustered-box:20000 --eps 5 -o pairs.csv\n"
        "  twobody join --data builtin:uniform-box:20000 --data2 builtin:clustered-box:5000 --eps 10 --emit counts\n"
        "  twobody join --data builtin:uniform-box:20000 --eps 20 --emit csr -o neighbours.npz\n",
};

struct KnnCommandOptions {
  CommonOptions o;
  int k = 0;
  std::string metric = "euclidean";
};

void run_knn(const KnnCommandOptions& s, const Context& c) {
  const CommonOptions& o = s.o;
  const BackendWarmUp warm(o);
  const VectorSets sets = load_vector_sets(o);
  KnnResult r = nearest_neighbours(sets.a, sets.second(), s.k, parse_metric(s.metric), make_run_options(o, c.bar));
  c.bar.finish();
  if (!cli_writes_output()) return;
  const TableFormat format = output_format(o);
  const std::size_t k = static_cast<std::size_t>(s.k);
  if (format == TableFormat::Npz || format == TableFormat::Hdf5) {
    write_arrays_file(o.output, {{"indices", std::move(r.indices), k}, {"distances", std::move(r.distances), k}}, format);
    return;
  }
  // A table: a row per (query, rank).
  std::vector<std::uint64_t> query, rank;
  for (std::size_t i = 0; i < r.n; ++i)
    for (std::size_t q = 0; q < k; ++q) {
      query.push_back(i);
      rank.push_back(q + 1);
    }
  Table t;
  t.meta = run_metadata(r.info);
  t.meta["k"] = s.k;
  t.meta["metric"] = s.metric;
  t.columns = {{"query", std::move(query)}, {"rank", std::move(rank)}, {"index", std::move(r.indices)},
               {"distance", std::move(r.distances)}};
  emit(t, o);
}

const Command<KnnCommandOptions> knn_command{
    .name = "knn",
    .help = "k nearest neighbours of every vector (in the set itself, or in --data2), exact, ties by index, any dimension",
    .features = {.weights = false, .box = false},
    .add_options =
        [](CLI::App& cmd, KnnCommandOptions& s) {
          remove_binning_options(cmd);
          cmd.get_option("--data")->description("query vectors (formats as for join)");
          cmd.get_option("--data2")->description("reference vectors; without it, each query's neighbours are the set's other vectors");
          cmd.add_option("-k", s.k, "neighbours per query")->required()->check(CLI::Range(1, 1 << 20));
          cmd.add_option("--metric", s.metric, "euclidean | cosine")->check(CLI::IsMember({"euclidean", "cosine"}));
        },
    .run = run_knn,
    .examples =
        "  twobody knn --data builtin:clustered-box:20000 -k 10 -o knn.npz\n"
        "  twobody knn --data builtin:uniform-box:2000 --data2 builtin:clustered-box:20000 -k 3 -o knn.csv\n",
};

}  // namespace

std::vector<Subcommand> vector_commands() { return {join_command, knn_command}; }

}  // namespace twobody::cli
