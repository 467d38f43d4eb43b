#include "mpi_session.hpp"

#include <cstdio>
#include <cstdlib>

#ifdef TWOBODY_HAVE_MPI
#include "twobody/distributed.hpp"
#endif

namespace twobody::cli {

namespace {
std::shared_ptr<const Distribution> distribution;
bool writes_output = true;
#ifdef TWOBODY_HAVE_MPI
bool started = false;

// Open MPI, MPICH/Hydra, PMIx launchers (srun included) set one of these in every process.
bool under_mpi_launcher() {
  for (const char* v : {"OMPI_COMM_WORLD_SIZE", "PMIX_RANK", "PMI_SIZE", "PMI_RANK", "MPI_LOCALNRANKS"})
    if (std::getenv(v)) return true;
  return false;
}
#endif
}  // namespace

MpiSession::MpiSession([[maybe_unused]] int& argc, [[maybe_unused]] char**& argv) {
#ifdef TWOBODY_HAVE_MPI
  if (!under_mpi_launcher()) return;
  int provided = 0;
  // Only the main thread calls MPI; the engine's OpenMP threads and the CUDA warm-up never do.
  MPI_Init_thread(&argc, &argv, MPI_THREAD_FUNNELED, &provided);
  started = true;
  int size = 1, rank = 0;
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  if (size > 1) distribution = mpi_distribution(MPI_COMM_WORLD);
  if (rank != 0) {
    // Every rank reaches the same result and the same errors (the distributed run agrees on the
    // first failure): rank 0 alone reports them.
    writes_output = false;
    if (!std::freopen("/dev/null", "w", stdout) || !std::freopen("/dev/null", "w", stderr)) return;
  }
#endif
}

MpiSession::~MpiSession() {
#ifdef TWOBODY_HAVE_MPI
  distribution.reset();
  if (started) MPI_Finalize();
#endif
}

std::shared_ptr<const Distribution> cli_distribution() { return distribution; }
bool cli_writes_output() { return writes_output; }

}  // namespace twobody::cli
