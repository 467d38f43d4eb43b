// Pair jobs on MPI ranks (pair_jobs.hpp says how they are cut) and the reduction of their results
// in a fixed order: per rank in job order, then over ranks in rank order on rank 0, broadcast.
#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <climits>
#include <cstring>
#include <map>
#include <new>

#include "twobody/detail/engine/device_distribution.hpp"
#include "twobody/detail/engine/pair_jobs.hpp"
#include "twobody/detail/engine/exact_sums.hpp"
#include "twobody/detail/engine/pair_limit.hpp"
#include "twobody/detail/engine/reductions.hpp"
#include "twobody/distributed.hpp"
#include "twobody/error.hpp"

namespace twobody {

namespace {

using dist::Decomposition;
using dist::PairJob;

// Gathers equal-length vectors to rank 0, sums them there in rank order and broadcasts the sum.
template <class T>
std::vector<T> sum_in_rank_order(const std::vector<T>& mine, MPI_Datatype type, MPI_Comm comm) {
  int P = 1, rank = 0;
  MPI_Comm_size(comm, &P);
  MPI_Comm_rank(comm, &rank);
  const int n = static_cast<int>(mine.size());
  std::vector<T> all(rank == 0 ? mine.size() * static_cast<std::size_t>(P) : 0);
  std::vector<T> sum(mine.size(), T{});
  if (n == 0) return sum;
  MPI_Gather(mine.data(), n, type, all.data(), n, type, 0, comm);
  if (rank == 0)
    for (int r = 0; r < P; ++r)
      for (int k = 0; k < n; ++k) sum[k] += all[static_cast<std::size_t>(r) * n + k];
  MPI_Bcast(sum.data(), n, type, 0, comm);
  return sum;
}

// sum_in_rank_order a block at a time, in place: rank 0 then holds P blocks, not P copies of an
// array with an entry per point (OutputKind::PerPoint). Every rank passes an array of one length.
template <class T>
void sum_in_rank_order_blocks(std::vector<T>& v, MPI_Datatype type, MPI_Comm comm) {
  constexpr std::size_t block = std::size_t(1) << 20;
  for (std::size_t at = 0; at < v.size(); at += block) {
    const auto first = v.begin() + static_cast<std::ptrdiff_t>(at);
    const auto last = v.begin() + static_cast<std::ptrdiff_t>(std::min(v.size(), at + block));
    const std::vector<T> sum = sum_in_rank_order(std::vector<T>(first, last), type, comm);
    std::copy(sum.begin(), sum.end(), first);
  }
}

// Every counter and exact sum of a rank's result summed over the ranks (each rank's from
// empty_result: the same lengths everywhere); per-point arrays a block at a time. The float64
// sums are then rounded from the exact ones, so they do not depend on the number of ranks.
void sum_results_in_rank_order(Result& r, MPI_Comm comm) {
  MPI_Datatype fixed;  // an exact sum: 16 bytes, added as one integer on rank 0
  MPI_Type_contiguous(static_cast<int>(sizeof(FixedSum)), MPI_BYTE, &fixed);
  MPI_Type_commit(&fixed);
  r.counts = sum_in_rank_order(r.counts, MPI_UINT64_T, comm);
  r.region_counts = sum_in_rank_order(r.region_counts, MPI_UINT64_T, comm);
  ExactSums& e = r.exact;
  for (std::vector<FixedSum>* v : {&e.weighted, &e.region_weighted, &e.separation_sum, &e.log_separation_sum})
    *v = sum_in_rank_order(*v, fixed, comm);
  for (PointReductions* p : {&r.per_point_a, &r.per_point_b}) sum_in_rank_order_blocks(p->counts, MPI_UINT64_T, comm);
  sum_in_rank_order_blocks(e.point_weighted_a, fixed, comm);
  sum_in_rank_order_blocks(e.point_weighted_b, fixed, comm);
  MPI_Type_free(&fixed);
  round_exact_sums(r);
  const std::vector<std::uint64_t> tallies =
      sum_in_rank_order(std::vector<std::uint64_t>{r.info.pairs_evaluated, r.info.pairs_settled_fp64}, MPI_UINT64_T, comm);
  r.info.pairs_evaluated = tallies[0];
  r.info.pairs_settled_fp64 = tallies[1];
}

// When a rank failed, every rank throws the first failing rank's error: no rank is left waiting
// in a collective call.
void agree_on_failure(bool failed, ErrorKind kind, const std::string& message, MPI_Comm comm) {
  int P = 1, rank = 0;
  MPI_Comm_size(comm, &P);
  MPI_Comm_rank(comm, &rank);
  const int mine = failed ? rank : P;
  int first = P;
  MPI_Allreduce(&mine, &first, 1, MPI_INT, MPI_MIN, comm);
  if (first == P) return;
  int k = static_cast<int>(kind);
  MPI_Bcast(&k, 1, MPI_INT, first, comm);
  int len = static_cast<int>(message.size());
  MPI_Bcast(&len, 1, MPI_INT, first, comm);
  std::string text = rank == first ? message : std::string(static_cast<std::size_t>(len), ' ');
  MPI_Bcast(text.data(), len, MPI_CHAR, first, comm);
  throw Error(static_cast<ErrorKind>(k), fmt::format("{} (MPI rank {})", text, first));
}

// Fixed-width strings from every rank, in rank order, on rank 0.
std::vector<std::string> gather_lines(const std::string& line, MPI_Comm comm) {
  constexpr int width = 512;
  int P = 1, rank = 0;
  MPI_Comm_size(comm, &P);
  MPI_Comm_rank(comm, &rank);
  char mine[width] = {};
  std::strncpy(mine, line.c_str(), width - 1);
  std::vector<char> all(rank == 0 ? static_cast<std::size_t>(P) * width : 0);
  MPI_Gather(mine, width, MPI_CHAR, all.data(), width, MPI_CHAR, 0, comm);
  std::vector<std::string> out;
  for (int r = 0; rank == 0 && r < P; ++r) out.emplace_back(all.data() + static_cast<std::size_t>(r) * width);
  return out;
}

class MpiDistribution final : public Distribution {
 public:
  MpiDistribution(MPI_Comm comm, DistributedOptions opt) : comm_(comm), opt_(opt) {
    MPI_Comm node;
    MPI_Comm_split_type(comm, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &node);
    MPI_Comm_rank(node, &node_rank_);
    MPI_Comm_free(&node);
    char name[MPI_MAX_PROCESSOR_NAME] = {};
    int len = 0;
    MPI_Get_processor_name(name, &len);
    host_.assign(name, static_cast<std::size_t>(len));
    // Seed 003: one GPU per process, the process's rank on its machine modulo the machine's GPUs.
    use_cuda_device(node_rank_);
  }

  Result run(const Statistic& stat, const PointSet& a, const PointSet* b, const RunOptions& opt) const override {
    RunOptions local = opt;
    local.distribution.reset();
    int P = 1, rank = 0;
    MPI_Comm_size(comm_, &P);
    MPI_Comm_rank(comm_, &rank);
    if (P == 1 || stat.output() == OutputKind::Matrix) return twobody::run(stat, a, b, local);
    // Every job's sums on the whole run's grids, so that they add exactly whatever the jobs.
    if (!local.sum_grids) local.sum_grids = sum_grids_for(stat, a, b);
    const auto t0 = std::chrono::steady_clock::now();
    // The whole run's checks first, on every rank alike: the same error everywhere before any job.
    RunOptions whole = local;
    if (whole.devices.size() > 1) whole.devices = {whole.devices.front()};  // (not the device split's plan: only its checks)
    (void)twobody::explain(stat, a, b, whole);

    const Decomposition D = dist::decompose(stat, a, b, P, chunks_per_rank(local));
    Result out = empty_result(stat, a.size(), b ? b->size() : 0);
    out.exact.grids = *local.sum_grids;
    std::vector<std::size_t> mine;
    for (std::size_t k = 0; k < D.jobs.size(); ++k)
      if (D.jobs[k].rank == rank) mine.push_back(k);
    JobsReport report;
    bool failed = false;
    ErrorKind kind = ErrorKind::Internal;
    std::string message;
    try {
      // This rank's jobs, in job order, on its devices (RunOptions::devices) or on this thread.
      report = run_jobs(stat, a, b, D, mine, local, out);
    } catch (const Error& e) {
      failed = true;
      kind = e.kind();
      message = e.what();
    } catch (const std::bad_alloc&) {
      failed = true;
      kind = ErrorKind::Resource;
      message = "out of memory in a pair job";
    } catch (const std::exception& e) {
      failed = true;
      message = e.what();
    }
    agree_on_failure(failed, kind, message, comm_);

    sum_results_in_rank_order(out, comm_);
    if (stat.output() == OutputKind::PairList) out.pairs = gather_pairs(out.pairs, opt.max_pairs);

    double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count(), slowest = 0;
    MPI_Allreduce(&seconds, &slowest, 1, MPI_DOUBLE, MPI_MAX, comm_);
    out.info.backend = report.backend.empty() ? local.backend : report.backend;
    out.info.device = fmt::format("{} MPI ranks; rank {}: {}", P, rank, report.device.empty() ? "no job" : report.device);
    out.info.threads = report.threads;
    out.info.n_a = a.size();
    out.info.n_b = b ? b->size() : 0;
    out.info.seconds = slowest;
    // The plan --explain prints: the split, a line per rank (rank 0 gathers them), one job's plan.
    std::string plan = describe(D);
    const std::string job = report.first_plan.empty() ? "no job" : report.first_plan.substr(0, report.first_plan.find('\n'));
    for (const std::string& l : gather_lines(rank_line(D, rank, job), comm_)) plan += "\n" + l;
    if (local.devices.size() > 1) plan += "\n" + report.describe(fmt::format("mpi: rank {}", rank));
    out.info.plan = plan + fmt::format("\nmpi: rank {}'s first job:\n{}", rank, report.first_plan);
    return out;
  }

  std::string explain(const Statistic& stat, const PointSet& a, const PointSet* b, const RunOptions& opt) const override {
    RunOptions local = opt;
    local.distribution.reset();
    int P = 1, rank = 0;
    MPI_Comm_size(comm_, &P);
    MPI_Comm_rank(comm_, &rank);
    if (P == 1 || stat.output() == OutputKind::Matrix) {
      const std::string whole = twobody::explain(stat, a, b, local);
      if (P == 1) return whole;
      return fmt::format("mpi: {} ranks; a matrix is not split: every rank computes it whole\n{}", P, whole);
    }
    // A job's plan on one of the rank's devices (the jobs are split over them, not cut again).
    if (local.devices.size() > 1) local.devices = {local.devices.front()};
    const std::string whole = twobody::explain(stat, a, b, local);
    const Decomposition D = dist::decompose(stat, a, b, P, chunks_per_rank(opt));
    std::string s = describe(D);
    for (const std::string& l : gather_lines(rank_line(D, rank, whole.substr(0, whole.find('\n'))), comm_))
      s += "\n" + l;
    return s + "\nmpi: each job runs as:\n" + whole;
  }

 private:
  // Slabs per set = ranks x this; a rank with several devices cuts its share finer, so that each of
  // its devices has jobs to take from its queue.
  int chunks_per_rank(const RunOptions& o) const {
    return opt_.chunks_per_rank * std::max(1, static_cast<int>(o.devices.size()));
  }

  // The split for the plan: the slabs and jobs, the ranks' estimated loads, how results are summed.
  static std::string describe(const Decomposition& D) {
    const auto [mn, mx] = std::minmax_element(D.load.begin(), D.load.end());
    double total = 0;
    for (double l : D.load) total += l;
    const double mean = D.load.empty() ? 0 : total / static_cast<double>(D.load.size());
    return D.describe_cut(fmt::format("mpi: {} ranks; ", D.load.size())) +
           fmt::format("; longest-first to the least loaded rank by estimated pairs: {:.3g} per rank on average, {:.3g} "
                       "to {:.3g} (max/mean {:.3f})",
                       mean, D.load.empty() ? 0.0 : *mn, D.load.empty() ? 0.0 : *mx, mean > 0 ? *mx / mean : 1.0) +
           "\nmpi: each job is an ordinary engine run on its rank's backend (with RunOptions::devices, on the "
           "rank's devices, a host thread each taking its longest job left); counts and exact sums summed per rank in "
           "job order, gathered to rank 0 and summed in rank order, then broadcast (the same bits as one process)";
  }

  // This rank's share of the split: its host, its jobs and their estimated pairs; `backend`: the
  // first line of a job's plan.
  std::string rank_line(const Decomposition& D, int rank, const std::string& backend) const {
    const auto jobs = std::count_if(D.jobs.begin(), D.jobs.end(), [&](const PairJob& j) { return j.rank == rank; });
    return fmt::format("mpi: rank {} on {} (rank {} on its node): {} jobs, {:.3g} estimated pairs; {}", rank, host_,
                       node_rank_, jobs, D.load[static_cast<std::size_t>(rank)], backend);
  }

  // Every rank's pairs on every rank, sorted by (i, j) as a one-process run gives them.
  std::vector<PairRecord> gather_pairs(const std::vector<PairRecord>& mine, std::size_t max_pairs) const {
    int P = 1, rank = 0;
    MPI_Comm_size(comm_, &P);
    MPI_Comm_rank(comm_, &rank);
    const std::uint64_t n = mine.size();
    std::vector<std::uint64_t> sizes(static_cast<std::size_t>(P));
    MPI_Allgather(&n, 1, MPI_UINT64_T, sizes.data(), 1, MPI_UINT64_T, comm_);
    std::uint64_t total = 0;
    for (auto s : sizes) total += s;
    if (total > max_pairs)
      throw_pair_limit(max_pairs);
    if (total > static_cast<std::uint64_t>(INT_MAX))
      throw Error(ErrorKind::Resource, fmt::format("a distributed pair list holds at most {} pairs (MPI counts are "
                                                   "int), not {}",
                                                   INT_MAX, total));
    MPI_Datatype record;
    MPI_Type_contiguous(static_cast<int>(sizeof(PairRecord)), MPI_BYTE, &record);
    MPI_Type_commit(&record);
    std::vector<int> counts(static_cast<std::size_t>(P)), displs(static_cast<std::size_t>(P));
    for (int r = 0, at = 0; r < P; ++r) {
      counts[r] = static_cast<int>(sizes[r]);
      displs[r] = at;
      at += counts[r];
    }
    std::vector<PairRecord> all(static_cast<std::size_t>(total));
    MPI_Gatherv(mine.data(), static_cast<int>(n), record, all.data(), counts.data(), displs.data(), record, 0, comm_);
    if (rank == 0)
      std::sort(all.begin(), all.end(), pair_order);
    MPI_Bcast(all.data(), static_cast<int>(total), record, 0, comm_);
    MPI_Type_free(&record);
    return all;
  }

  MPI_Comm comm_;
  DistributedOptions opt_;
  int node_rank_ = 0;
  std::string host_;
};

}  // namespace

std::shared_ptr<const Distribution> mpi_distribution(MPI_Comm comm, DistributedOptions opt) {
  return std::make_shared<MpiDistribution>(comm, opt);
}

Result run_distributed(const Statistic& stat, const PointSet& a, const PointSet* b, const RunOptions& opt,
                       MPI_Comm comm, DistributedOptions dopt) {
  RunOptions o = opt;
  o.distribution = mpi_distribution(comm, dopt);
  return twobody::run(stat, a, b, o);
}

}  // namespace twobody
