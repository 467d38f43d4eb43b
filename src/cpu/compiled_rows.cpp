// The compiled CPU evaluator (compiled_rows.hpp): compiler discovery, the build into the kernel
// cache, dlopen, and the choice between it and the interpreter.
#include "twobody/detail/cpu/compiled_rows.hpp"

#include <dlfcn.h>
#include <fcntl.h>
#include <spawn.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <fmt/format.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <chrono>
#include <cstdlib>
#include <ctime>
#include <filesystem>
#include <fstream>
#include <map>
#include <mutex>
#include <sstream>
#include <thread>

#include "twobody/detail/engine/kernel_cache.hpp"
#include "twobody/detail/expr/emit_rows.hpp"
#include "twobody/error.hpp"

extern char** environ;

namespace twobody::cpu {

namespace fs = std::filesystem;

const char* const kRowsFlags = "-std=c++17 -O3 -march=native -ffp-contract=off -fno-fast-math -fno-math-errno -fPIC -shared -w";

namespace {

// bench/RESULTS.md ("Pair expressions on the CPU: interpreter and compiled object", this 2-core
// machine): the interpreter spends 0.3-0.7 ns an operation a pair on one thread (exp, log and pow
// ~20 operations' worth: portable::pow is ~100 ns), the compiled object is 1.4-7.6x faster, and a
// compile takes 0.25-0.85 s. auto compiles when the interpreter's estimate exceeds four compiles:
// a gain even at the smallest ratio measured (1.4x pays back a compile after ~3.5 compiles' time).
constexpr double kInterpretedOpSeconds = 0.5e-9;
constexpr double kCompileSeconds = 0.6;
constexpr double kCompileWorth = 4.0;

std::string env(const char* name) {
  const char* v = std::getenv(name);
  return v ? v : "";
}

// Seconds a compiler call may take before it is killed (TWOBODY_CXX_TIMEOUT; default 120): a hung
// compiler must not hang the run, which then takes the interpreter.
double compiler_timeout() {
  const std::string v = env("TWOBODY_CXX_TIMEOUT");
  if (v.empty()) return 120;
  char* end = nullptr;
  const double t = std::strtod(v.c_str(), &end);
  if (end == v.c_str() || *end != '\0' || !(t > 0))
    throw_config(fmt::format("TWOBODY_CXX_TIMEOUT={}: expected a positive number of seconds", v));
  return t;
}

// The exit status run_process gives a call it killed after compiler_timeout() (as timeout(1)).
constexpr int kTimedOut = 124;

// Runs argv with stdout and stderr into `log`; the exit status, kTimedOut when it ran past
// compiler_timeout() (then killed), or -1 when it could not start.
int run_process(const std::vector<std::string>& argv, const fs::path& log) {
  std::vector<char*> args;
  for (const std::string& a : argv) args.push_back(const_cast<char*>(a.c_str()));
  args.push_back(nullptr);
  posix_spawn_file_actions_t fa;
  posix_spawn_file_actions_init(&fa);
  posix_spawn_file_actions_addopen(&fa, 1, log.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
  posix_spawn_file_actions_adddup2(&fa, 1, 2);
  posix_spawn_file_actions_addopen(&fa, 0, "/dev/null", O_RDONLY, 0);
  pid_t pid = 0;
  const int rc = posix_spawnp(&pid, args[0], &fa, nullptr, args.data(), environ);
  posix_spawn_file_actions_destroy(&fa);
  if (rc != 0) return -1;
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::duration<double>(compiler_timeout());
  int status = 0;
  for (;;) {
    const pid_t done = ::waitpid(pid, &status, WNOHANG);
    if (done == pid) break;
    if (done < 0 && errno != EINTR) return -1;
    if (std::chrono::steady_clock::now() > deadline) {
      ::kill(pid, SIGKILL);
      while (::waitpid(pid, &status, 0) < 0 && errno == EINTR) {
      }
      return kTimedOut;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + (WIFSIGNALED(status) ? WTERMSIG(status) : 0);
}

std::string read_text(const fs::path& p, std::size_t max = 1 << 20) {
  std::ifstream in(p, std::ios::binary);
  std::ostringstream s;
  s << in.rdbuf();
  std::string t = std::move(s).str();
  if (t.size() > max) t.resize(max);
  return t;
}

std::string first_line(const std::string& s) { return s.substr(0, s.find('\n')); }

// What tells one processor's -march=native from another's: a cache shared between machines must
// not hand one an object built for the other.
std::string cpu_identity() {
  std::ifstream in("/proc/cpuinfo");
  std::string line, model, flags;
  while (std::getline(in, line) && (model.empty() || flags.empty())) {
    if (model.empty() && line.rfind("model name", 0) == 0) model = line;
    if (flags.empty() && (line.rfind("flags", 0) == 0 || line.rfind("Features", 0) == 0)) flags = line;
  }
  return model + "\n" + flags;
}

// A fresh folder of this process for one compile's files (removed by its user).
fs::path scratch_dir() {
  static std::atomic<unsigned> serial{0};
  const fs::path p = fs::temp_directory_path() / fmt::format("twobody-{}-{}", ::getpid(), serial++);
  fs::create_directories(p);
  return p;
}

struct Loaded {
  expr::TbRowsFn fn = nullptr;
  std::string error;  // why not, when fn is null
  std::string where;  // the object's file
};

Loaded load_object(const fs::path& file) {
  Loaded l;
  l.where = file.string();
  void* h = ::dlopen(file.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (!h) {
    l.error = fmt::format("dlopen failed: {}", ::dlerror());
    return l;
  }
  using AbiFn = int (*)();
  const auto abi = reinterpret_cast<AbiFn>(::dlsym(h, "tb_rows_abi"));
  const auto fn = reinterpret_cast<expr::TbRowsFn>(::dlsym(h, "tb_rows"));
  if (!abi || !fn || abi() != expr::kRowsAbi) {
    ::dlclose(h);
    l.error = "the object does not export this build's tb_rows";
    return l;
  }
  l.fn = fn;  // kept loaded for the process: runs may still hold the pointer
  return l;
}

// The process's loaded objects and failures, by key: a key is compiled at most once a process.
std::mutex g_mutex;
std::map<std::string, Loaded>& loaded() {
  static std::map<std::string, Loaded> m;
  return m;
}

struct Build {
  std::string key, summary, source;
};

Build build_of(const expr::Compiled& c, const HostCompiler& cc) {
  Build b;
  b.source = expr::emit_rows_source(c);
  b.key = fmt::format("twobody tb_rows abi {}\ncompiler: {}\nversion: {}\nflags: {}\ncpu: {}\nsource:\n{}", expr::kRowsAbi, cc.path,
                      cc.version, kRowsFlags, cpu_identity(), b.source);
  b.summary = fmt::format("{}  [{}]", c.canonical, cc.version);
  return b;
}

// Compiles the source into an object's bytes; Error(Backend) with the compiler's first lines.
std::string compile(const Build& b, const HostCompiler& cc) {
  const fs::path dir = scratch_dir();
  const std::string stem = "rows";
  const fs::path src = dir / (stem + ".cpp"), obj = dir / (stem + ".so"), log = dir / (stem + ".log");
  {
    std::ofstream out(src, std::ios::binary);
    out << b.source;
    if (!out) throw Error(ErrorKind::Backend, fmt::format("cannot write {}", src.string()));
  }
  std::vector<std::string> argv{cc.path};
  std::istringstream flags(kRowsFlags);
  for (std::string f; flags >> f;) argv.push_back(f);
  argv.insert(argv.end(), {src.string(), "-o", obj.string()});
  const int rc = run_process(argv, log);
  std::string bytes;
  if (rc == 0) bytes = read_text(obj, std::size_t(1) << 30);
  const std::string messages = read_text(log, 600);
  std::error_code ec;
  for (const fs::path& p : {src, obj, log, dir}) fs::remove(p, ec);  // the folder only when empty
  if (rc != 0 || bytes.empty())
    throw Error(ErrorKind::Backend,
                rc == kTimedOut ? fmt::format("{} ran past {} s (TWOBODY_CXX_TIMEOUT) and was stopped", cc.path,
                                              compiler_timeout())
                                : fmt::format("{} failed (exit {}): {}", cc.path, rc, first_line(messages)));
  return bytes;
}

// The object for `b`: the process's, the cache's, or compiled now (and stored).
Loaded obtain(const Build& b, const HostCompiler& cc, bool* compiled_now) {
  std::lock_guard<std::mutex> lock(g_mutex);
  auto& m = loaded();
  if (auto it = m.find(b.key); it != m.end()) return it->second;
  const KernelCache cache(KernelCache::default_dir());
  Loaded l;
  std::error_code ec;
  if (const auto hit = cache.find(b.key)) {
    l = load_object(*hit);
    if (!l.fn) fs::remove(*hit, ec);  // whole but unloadable: rebuilt below
  }
  if (!l.fn) {
    try {
      const std::string object = compile(b, cc);
      *compiled_now = true;
      try {
        const fs::path entry = cache.store(b.key, b.summary, object);
        l = load_object(entry);
        if (!l.fn) fs::remove(entry, ec);  // the compiler's output is no object: not kept
        static bool pruned = false;  // once a process (under g_mutex)
        if (!pruned) cache.prune(KernelCache::default_max_bytes());
        pruned = true;
      } catch (const std::exception& e) {
        // No cache folder (read-only, no space): the object lives for this process only, its file
        // unlinked once loaded (the mapping stays).
        const fs::path own = scratch_dir() / KernelCache::file_name(b.key);
        std::ofstream(own, std::ios::binary) << object;
        l = load_object(own);
        fs::remove(own, ec);
        fs::remove(own.parent_path(), ec);
        if (l.fn) l.where = fmt::format("this process only (not cached: {})", e.what());
      }
    } catch (const std::exception& e) {  // never a failed run: the interpreter, and why
      l.fn = nullptr;
      l.error = e.what();
    }
  }
  m[b.key] = l;
  return l;
}

// The interpreter's estimated seconds: operations a pair (the loop over k counted d times).
double interpreted_seconds(const expr::Compiled& c, double pairs, int threads) {
  double ops = 1;
  for (int id : c.pair_nodes) {
    const expr::Op op = c.node(id).op;
    const double cost = op == expr::Op::Exp || op == expr::Op::Log || op == expr::Op::Pow ? 20 : 1;
    ops += cost * ((c.node(id).vector || expr::is_reduction(op)) ? c.g.dim : 1);
  }
  return pairs * ops * kInterpretedOpSeconds / std::max(1, threads);
}

}  // namespace

double cpu_expression_seconds(const expr::Compiled& c, double pairs, int threads, CpuCodegen mode) {
  const double interpreted = interpreted_seconds(c, pairs, threads);
  return mode == CpuCodegen::Off ? interpreted : std::min(interpreted, kCompileSeconds + interpreted / 2);
}

HostCompiler host_compiler() {
  HostCompiler cc;
  cc.path = !env("TWOBODY_CXX").empty() ? env("TWOBODY_CXX") : !env("CXX").empty() ? env("CXX") : TWOBODY_BUILD_CXX;
  static std::mutex mutex;
  static std::map<std::string, HostCompiler> asked;
  std::lock_guard<std::mutex> lock(mutex);
  if (auto it = asked.find(cc.path); it != asked.end()) return it->second;
  try {
    const fs::path log = scratch_dir() / "version.log";
    const int rc = run_process({cc.path, "--version"}, log);
    cc.version = first_line(read_text(log, 4096));
    std::error_code ec;
    fs::remove(log, ec);
    fs::remove(log.parent_path(), ec);
    if (rc != 0) cc.error = rc < 0 ? fmt::format("no compiler {}", cc.path) : fmt::format("{} --version failed (exit {})", cc.path, rc);
  } catch (const std::exception& e) {
    cc.error = e.what();
  }
  asked[cc.path] = cc;
  return cc;
}

RowsChoice choose_rows(const expr::Compiled& c, CpuCodegen mode, double pairs, int threads, bool dry) {
  RowsChoice r;
  if (mode == CpuCodegen::Off) {
    r.how = "the interpreter (--cpu-codegen off)";
    return r;
  }
  const HostCompiler cc = host_compiler();
  if (!cc.error.empty()) {
    r.how = fmt::format("the interpreter (no compiled object: {}; set TWOBODY_CXX to a C++ compiler)", cc.error);
    return r;
  }
  const Build b = build_of(c, cc);
  const double interpreted = interpreted_seconds(c, pairs, threads);
  bool cached = false;
  {
    std::lock_guard<std::mutex> lock(g_mutex);
    cached = loaded().count(b.key) ? loaded()[b.key].fn != nullptr : KernelCache(KernelCache::default_dir()).find(b.key).has_value();
  }
  const bool worth = interpreted > kCompileWorth * kCompileSeconds;
  if (mode == CpuCodegen::Auto && !cached && !worth) {
    r.how = fmt::format("the interpreter (--cpu-codegen auto: about {:.2g} s interpreted, under {} compiles of ~{} s; "
                        "--cpu-codegen on compiles)",
                        interpreted, kCompileWorth, kCompileSeconds);
    return r;
  }
  if (dry) {
    r.how = cached ? fmt::format("a compiled object from the kernel cache ({})", KernelCache::default_dir().string())
                   : fmt::format("a compiled object, built by {} ({}) into the kernel cache", cc.path, cc.version);
    return r;
  }
  bool compiled_now = false;
  const auto t0 = std::chrono::steady_clock::now();
  const Loaded l = obtain(b, cc, &compiled_now);
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  if (!l.fn) {
    r.how = fmt::format("the interpreter (the compiled object failed: {})", l.error);
    return r;
  }
  r.fn = l.fn;
  r.how = compiled_now ? fmt::format("a compiled object, built by {} in {:.2f} s ({})", cc.version, seconds, l.where)
                       : fmt::format("a compiled object from the kernel cache ({})", l.where);
  return r;
}

}  // namespace twobody::cpu
