#pragma once
// The command line under mpirun: MPI started when the launcher says so (a plain `twobody` never
// touches MPI), every engine run split over the ranks, rank 0 the only one that writes.
#include <memory>

#include "twobody/engine.hpp"

namespace twobody::cli {

class MpiSession {
 public:
  MpiSession(int& argc, char**& argv);
  ~MpiSession();
  MpiSession(const MpiSession&) = delete;
  MpiSession& operator=(const MpiSession&) = delete;
};

// The split every command's RunOptions carry: null outside mpirun or with one rank.
std::shared_ptr<const Distribution> cli_distribution();
// False on every rank but 0 of a run under mpirun: those write no table and no message.
bool cli_writes_output();

}  // namespace twobody::cli
