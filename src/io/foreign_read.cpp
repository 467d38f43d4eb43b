#include "twobody/detail/io/foreign_read.hpp"

#include <signal.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cstdio>
#include <cstring>

#include "twobody/error.hpp"

namespace twobody::io {
namespace {

constexpr int kSignals[] = {SIGSEGV, SIGBUS, SIGFPE, SIGILL, SIGABRT};
struct sigaction previous[std::size(kSignals)];

// The message, composed before the library is called (a signal handler may only write(2) it).
char message[1200];
std::size_t message_length = 0;
std::atomic<int> depth{0};

const char* signal_name(int sig) {
  switch (sig) {
    case SIGSEGV: return "segmentation fault";
    case SIGBUS: return "bus error";
    case SIGFPE: return "arithmetic fault";
    case SIGILL: return "illegal instruction";
    case SIGABRT: return "abort";
  }
  return "fatal signal";
}

void on_fatal_signal(int sig) {
  if (depth.load(std::memory_order_relaxed) > 0) {
    const char* name = signal_name(sig);
    (void)!::write(STDERR_FILENO, message, message_length);
    (void)!::write(STDERR_FILENO, name, std::strlen(name));
    static const char tail[] = " inside the library, below what twobody can check)\n";
    (void)!::write(STDERR_FILENO, tail, sizeof tail - 1);
    ::_exit(static_cast<int>(ErrorKind::Input));
  }
  // Not ours: the previous handler takes it (a fault re-executes and reaches it; abort() raises
  // again once this returns).
  for (std::size_t i = 0; i < std::size(kSignals); ++i)
    if (kSignals[i] == sig) ::sigaction(sig, &previous[i], nullptr);
}

}  // namespace

ForeignRead::ForeignRead(const char* library, const std::string& file) {
  if (depth.fetch_add(1) == 0) {
    const int n = std::snprintf(message, sizeof message,
                                "twobody: error: %s: the file is corrupt: %s crashed reading it (",
                                file.c_str(), library);
    message_length = n < 0 ? 0 : std::min<std::size_t>(static_cast<std::size_t>(n), sizeof message - 1);
  }
}

ForeignRead::~ForeignRead() { depth.fetch_sub(1); }

void install_foreign_crash_report() {
  for (std::size_t i = 0; i < std::size(kSignals); ++i) {
    struct sigaction a {};
    a.sa_handler = on_fatal_signal;
    sigemptyset(&a.sa_mask);
    a.sa_flags = SA_NODEFER;
    ::sigaction(kSignals[i], &a, &previous[i]);
  }
}

}  // namespace twobody::io
