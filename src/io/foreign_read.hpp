#pragma once
// A crash inside a file-format library (libhdf5, cfitsio) reported as what it is: an unreadable
// input. Those libraries parse a user's file with their own code, and some corrupted files make
// them fault (libhdf5 1.10's group lookup on a corrupted local heap: tests/fuzz/libhdf5-crashes)
// below anything twobody can check. While a ForeignRead is alive its file is recorded; a program
// that called install_foreign_crash_report (the CLI does; a library must not take a host
// program's signals) then answers a fault there with one line naming the file and the library,
// and the input error's exit code, instead of dying by the signal. Outputs are written only after
// the inputs are read, so nothing is left behind. (Reading in a separate process would survive
// the fault too; fork without exec deadlocked under the sanitizers and OpenMP, session 16.)
#include <string>

namespace twobody::io {

class ForeignRead {
 public:
  ForeignRead(const char* library, const std::string& file);
  ~ForeignRead();
  ForeignRead(const ForeignRead&) = delete;
  ForeignRead& operator=(const ForeignRead&) = delete;
};

// Installs the handlers of SIGSEGV, SIGBUS, SIGFPE, SIGILL and SIGABRT. A fault outside a
// ForeignRead goes to whatever handler was there before (the default, or a sanitizer's).
void install_foreign_crash_report();

}  // namespace twobody::io
