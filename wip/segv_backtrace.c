// Diagnostic (issue 21, device-only Python crash): LD_PRELOAD it to print a native backtrace and
// the loaded C++ runtimes on SIGSEGV/SIGABRT, then let the previous handler run.
#define _GNU_SOURCE
#include <execinfo.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>
#include <fcntl.h>

#include <stdlib.h>
static void on_fault(int sig) {
  void* frames[64];
  int n = backtrace(frames, 64);
  const char* path = getenv("SEGV_BT_FILE");
  int out = path ? open(path, O_WRONLY | O_CREAT | O_APPEND, 0644) : 2;
  if (out < 0) out = 2;
  dprintf(out, "\n=== native backtrace (signal %d, thread %ld) ===\n", sig, (long)gettid());
  backtrace_symbols_fd(frames, n, out);
  int fd = open("/proc/self/maps", O_RDONLY);
  char buf[65536];
  ssize_t k = fd >= 0 ? read(fd, buf, sizeof buf - 1) : -1;
  if (k > 0) {
    buf[k] = 0;
    for (char* line = strtok(buf, "\n"); line; line = strtok(NULL, "\n"))
      if ((strstr(line, "libstdc++") || strstr(line, "libgomp") || strstr(line, "_twobody")) && strstr(line, "r-xp"))
        dprintf(out, "%s\n", line);
  }
  signal(sig, SIG_DFL);
  raise(sig);
}

__attribute__((constructor)) static void install(void) {
  signal(SIGSEGV, on_fault);
  signal(SIGABRT, on_fault);
}
