#pragma once
// Many GPUs and many machines through MPI (seed 003: "using multiple GPUs in MPI is easy once each
// process has its own GPU"). Every rank holds the same points and calls with the same arguments;
// the pairs are cut into jobs (slabs of each set: auto(A_p), cross(A_p, A_q), cross(A_p, B_q)),
// each job is an ordinary engine run on the rank's backend (its GPU: node-local rank modulo the
// node's GPUs), and the partial results are summed in a fixed order, so integer counts equal a
// one-process run's exactly and every rank gets the same Result. Link twobody::mpi.
#include <mpi.h>

#include <memory>
#include <string>

#include "twobody/engine.hpp"

namespace twobody {

struct DistributedOptions {
  // Slabs per set = ranks x this: more evens out the load, fewer makes larger jobs.
  int chunks_per_rank = 2;
};

// A Distribution over `comm` for RunOptions::distribution: every run()/explain() with it is split
// over the ranks (all of them must make the same calls in the same order). Makes this rank use
// CUDA device (rank on its node) modulo (devices on the node) (twobody::use_cuda_device). With one
// rank, or for a Matrix output, runs are not split.
std::shared_ptr<const Distribution> mpi_distribution(MPI_Comm comm, DistributedOptions opt = {});

// One distributed run (RunOptions::distribution is ignored): the same as run() with
// opt.distribution = mpi_distribution(comm).
Result run_distributed(const Statistic& stat, const PointSet& a, const PointSet* b, const RunOptions& opt,
                       MPI_Comm comm, DistributedOptions dopt = {});

}  // namespace twobody
