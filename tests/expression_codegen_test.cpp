// The compiled CPU evaluator of pair expressions (src/cpu/compiled_rows.cpp) and the kernel cache
// (src/engine/kernel_cache.cpp): the compiled object gives the interpreter's values and the
// oracle's, bit for bit, on every expression of the test corpora; a missing, failing or lying
// compiler leaves the interpreter with the reason in the plan; the cache's entries are whole,
// keyed, pruned, and shared safely by eight processes compiling one key at once.
#include <fmt/format.h>
#include <gtest/gtest.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <random>

#include "expression_cases.hpp"
#include "expression_corpus.hpp"
#include "test_support.hpp"
#include "twobody/detail/cpu/compiled_rows.hpp"
#include "twobody/detail/cpu/expression_rows.hpp"
#include "twobody/detail/engine/kernel_cache.hpp"
#include "twobody/error.hpp"
#include "twobody/expression.hpp"

extern char** environ;

namespace {

namespace fs = std::filesystem;
using namespace expression_cases;

bool same_bits(double x, double y) { return std::memcmp(&x, &y, sizeof x) == 0 || (x != x && y != y); }

// A fresh cache folder and the build's own compiler for each test.
class Codegen : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() / fmt::format("twobody-codegen-test-{}-{}", ::getpid(), serial_++);
    fs::remove_all(dir_);
    fs::create_directories(dir_);
    ::setenv("TWOBODY_CACHE_DIR", dir_.c_str(), 1);
    ::unsetenv("TWOBODY_CXX");
  }
  void TearDown() override {
    ::unsetenv("TWOBODY_CACHE_DIR");
    ::unsetenv("TWOBODY_CXX");
    std::error_code ec;
    fs::remove_all(dir_, ec);
  }
  std::size_t entries() const {
    std::size_t n = 0;
    if (!fs::exists(dir_ / "kernels" / "v1")) return 0;
    for (const auto& e : fs::directory_iterator(dir_ / "kernels" / "v1")) n += e.path().extension() == ".so";
    return n;
  }
  // A shell script standing in for a compiler.
  std::string script(const std::string& name, const std::string& body) const {
    const fs::path p = dir_ / name;
    std::ofstream(p) << "#!/bin/sh\n" << body;
    fs::permissions(p, fs::perms::owner_all);
    return p.string();
  }
  fs::path dir_;
  static inline int serial_ = 0;
};

twobody::ExpressionParams corpus_params() {
  twobody::ExpressionParams p;
  p.scalars = {{"p", 3.0}, {"h", 0.5}, {"eps", 0.1}};
  p.vectors = {{"w", {1.0, 2.0, 0.5}}};
  return p;
}

// Every value of a × b (or a's pairs) by both evaluators, in blocks of several lengths and offsets
// (the compiled loop's 256-partner blocks and their remainders), bit for bit.
void expect_same_rows(const twobody::PairExpression& f, const twobody::PairTable& a, const twobody::PairTable& b,
                      twobody::cpu::RowsChoice& compiled, std::vector<double>* values = nullptr) {
  ASSERT_NE(compiled.fn, nullptr) << compiled.how;
  twobody::cpu::ExpressionRows rows(f.compiled(), a, b, 2);
  auto ws = rows.workspace();
  std::vector<double> x(b.size()), y(b.size());
  for (std::size_t i = 0; i < a.size(); ++i) {
    rows.use_compiled(nullptr);
    rows.row(i, 0, b.size(), x.data(), ws);
    rows.use_compiled(compiled.fn);
    const std::size_t j0 = i % 7 < b.size() ? i % 7 : 0;
    rows.row(i, 0, j0, y.data(), ws);
    rows.row(i, j0, b.size() - j0, y.data() + j0, ws);
    for (std::size_t j = 0; j < b.size(); ++j)
      ASSERT_TRUE(same_bits(x[j], y[j])) << f.text() << " at (" << i << ", " << j << "): interpreted " << x[j] << ", compiled " << y[j];
    if (values) values->insert(values->end(), y.begin(), y.end());
  }
}

TEST_F(Codegen, CompiledEqualsInterpretedAndOracle) {
  const auto seed = testing_support::fresh_seed();
  SCOPED_TRACE("seed " + std::to_string(seed));
  std::mt19937_64 rng(seed);
  for (int kind = 0; kind < 4; ++kind) {
    const oracle::Rows ra = make_rows(kind, 40 + rng() % 30, rng), rb = make_rows(kind, 250 + rng() % 300, rng);
    const twobody::PairTable a = table_of(ra), b = table_of(rb);
    for (const Case& c : cases()) {
      SCOPED_TRACE(std::string(c.text) + " where " + c.where + ", data kind " + std::to_string(kind));
      twobody::ExpressionParams p;
      p.scalars = {{"p", kP}, {"h", kH}};
      const auto f = twobody::PairExpression::parse(c.text, a.schema(), &b.schema(), p, c.where);
      auto choice = twobody::cpu::choose_rows(f.compiled(), twobody::CpuCodegen::On, 1, 1, false);
      std::vector<double> values;
      expect_same_rows(f, a, b, choice, &values);
      for (std::size_t i = 0, t = 0; i < ra.n; ++i)
        for (std::size_t j = 0; j < rb.n; ++j, ++t) {
          double want = c.f(oracle::Pt{&ra, i}, oracle::Pt{&rb, j});
          if (c.predicate && want != 1.0) want = kNone;
          ASSERT_TRUE(same_bits(values[t], want)) << "oracle " << want << ", compiled " << values[t] << " at " << i << ", " << j;
        }
    }
  }
}

TEST_F(Codegen, EveryCorpusExpressionCompiledEqualsInterpreted) {
  std::mt19937_64 rng(testing_support::fresh_seed());
  const oracle::Rows ra = make_rows(0, 23, rng), rb = make_rows(3, 300, rng);
  const twobody::PairTable a = table_of(ra), b = table_of(rb);
  for (const auto& v : expression_corpus::valid()) {
    SCOPED_TRACE(v.text);
    const auto f = twobody::PairExpression::parse(v.text, a.schema(), &b.schema(), corpus_params());
    auto choice = twobody::cpu::choose_rows(f.compiled(), twobody::CpuCodegen::On, 1, 1, false);
    expect_same_rows(f, a, b, choice);
  }
}

TEST_F(Codegen, RunsSayWhichEvaluatorAndAgree) {
  std::mt19937_64 rng(testing_support::fresh_seed());
  const oracle::Rows r = make_rows(0, 300, rng);
  const twobody::PairTable t = table_of(r);
  const auto f = twobody::PairExpression::parse("exp(-dot(a-b, a-b)) * a.t - b.x", t.schema());
  twobody::Statistic s;
  s.reduction = twobody::reduce::Sum{};
  using twobody::CpuCodegen;
  EXPECT_NE(twobody::explain_expression(f, s, t, nullptr, {}, CpuCodegen::On).find("evaluator: a compiled object, built by"),
            std::string::npos);
  const auto off = twobody::run_expression(f, s, t, nullptr, {}, CpuCodegen::Off);
  const auto on = twobody::run_expression(f, s, t, nullptr, {}, CpuCodegen::On);
  const auto again = twobody::run_expression(f, s, t, nullptr, {}, CpuCodegen::Auto);  // cached now
  EXPECT_NE(off.info.plan.find("evaluator: the interpreter (--cpu-codegen off)"), std::string::npos) << off.info.plan;
  EXPECT_NE(on.info.plan.find("evaluator: a compiled object"), std::string::npos) << on.info.plan;
  EXPECT_NE(again.info.plan.find("evaluator: a compiled object"), std::string::npos) << again.info.plan;
  EXPECT_EQ(off.value_sum, on.value_sum);
  EXPECT_EQ(off.value_sum, again.value_sum);
  EXPECT_EQ(entries(), 1u);
  // auto on a small run with nothing cached: the interpreter, and why.
  const auto g = twobody::PairExpression::parse("a.x * b.y", t.schema());
  EXPECT_NE(twobody::explain_expression(g, s, t, nullptr).find("evaluator: the interpreter (--cpu-codegen auto"), std::string::npos);
  EXPECT_THROW(twobody::parse_cpu_codegen("maybe"), twobody::Error);
}

// A compiler that is missing, fails, or writes something that is not an object: the interpreter,
// the reason in the plan, the same values.
TEST_F(Codegen, BrokenCompilersLeaveTheInterpreter) {
  std::mt19937_64 rng(1);
  const oracle::Rows r = make_rows(0, 50, rng);
  const twobody::PairTable t = table_of(r);
  twobody::Statistic s;
  s.reduction = twobody::reduce::Sum{};
  const std::string fails = script("fails", "[ \"$1\" = --version ] && { echo fake 1.0; exit 0; }\necho 'fake: error: no' >&2\nexit 1\n");
  const std::string junk = script("junk", "[ \"$1\" = --version ] && { echo junk 1.0; exit 0; }\n"
                                          "while [ $# -gt 1 ]; do shift; done\necho 'not an object' > \"$1\"\n");
  // (A compiler that hangs is stopped after TWOBODY_CXX_TIMEOUT.)
  const std::string hangs = script("hangs", "[ \"$1\" = --version ] && { echo slow 1.0; exit 0; }\nexec sleep 30\n");
  ::setenv("TWOBODY_CXX_TIMEOUT", "0.5", 1);
  const struct {
    std::string cxx, reason;
  } broken[] = {{(dir_ / "no-such-compiler").string(), "no compiler"},
                {fails, "failed (exit 1): fake: error: no"},
                {junk, "dlopen failed"},
                {hangs, "ran past 0.5 s (TWOBODY_CXX_TIMEOUT) and was stopped"}};
  const auto want = twobody::run_expression(twobody::PairExpression::parse("a.x * b.y - a.t", t.schema()), s, t, nullptr, {},
                                            twobody::CpuCodegen::Off);
  for (const auto& c : broken) {
    SCOPED_TRACE(c.cxx);
    ::setenv("TWOBODY_CXX", c.cxx.c_str(), 1);
    const auto f = twobody::PairExpression::parse("a.x * b.y - a.t", t.schema());
    const auto got = twobody::run_expression(f, s, t, nullptr, {}, twobody::CpuCodegen::On);
    EXPECT_NE(got.info.plan.find("evaluator: the interpreter"), std::string::npos) << got.info.plan;
    EXPECT_NE(got.info.plan.find(c.reason), std::string::npos) << got.info.plan;
    EXPECT_EQ(got.value_sum, want.value_sum);
  }
  ::unsetenv("TWOBODY_CXX_TIMEOUT");
  EXPECT_EQ(entries(), 0u);  // the junk output was not kept
}

TEST_F(Codegen, CacheEntriesAreWholeAndKeyed) {
  const twobody::KernelCache cache(dir_ / "c");
  EXPECT_FALSE(cache.find("key one").has_value());
  const fs::path p = cache.store("key one", "summary one", std::string(1000, 'x'));
  ASSERT_TRUE(cache.find("key one").has_value());
  EXPECT_EQ(cache.list().at(0).summary, "summary one");
  // Another key whose file this is (a hash collision): a miss, the entry kept.
  fs::copy_file(p, dir_ / "c" / twobody::KernelCache::file_name("key two"));
  EXPECT_FALSE(cache.find("key two").has_value());
  EXPECT_TRUE(fs::exists(dir_ / "c" / twobody::KernelCache::file_name("key two")));
  // A damaged entry (a byte of the object changed, or the file cut short): a miss, and deleted.
  {
    std::fstream f(p, std::ios::in | std::ios::out | std::ios::binary);
    f.seekp(10);
    f.put('y');
  }
  EXPECT_FALSE(cache.find("key one").has_value());
  EXPECT_FALSE(fs::exists(p));
  cache.store("key one", "summary one", std::string(1000, 'x'));
  fs::resize_file(p, 500);
  EXPECT_FALSE(cache.find("key one").has_value());
  EXPECT_FALSE(fs::exists(p));
  // A folder that cannot be made: Error(Resource).
  std::ofstream(dir_ / "file") << "x";
  try {
    twobody::KernelCache(dir_ / "file" / "sub").store("k", "s", "o");
    ADD_FAILURE() << "no error";
  } catch (const twobody::Error& e) {
    EXPECT_EQ(e.kind(), twobody::ErrorKind::Resource);
  }
  EXPECT_EQ(cache.clear(), 1u);  // "key two"'s file; "key one" was deleted as damaged
  EXPECT_TRUE(cache.list().empty());
}

TEST_F(Codegen, PruningDropsTheLeastRecentlyUsed) {
  const twobody::KernelCache cache(dir_ / "c");
  const auto now = fs::file_time_type::clock::now();
  for (int k = 0; k < 5; ++k) {
    const fs::path p = cache.store(fmt::format("key {}", k), "s", std::string(1000, 'x'));
    fs::last_write_time(p, now - std::chrono::hours(10 - k));
  }
  ASSERT_TRUE(cache.find("key 0").has_value());  // used now: the newest
  const std::uintmax_t one = cache.list().at(0).bytes;
  EXPECT_EQ(cache.prune(2 * one), 3u);
  EXPECT_TRUE(cache.find("key 0").has_value());
  EXPECT_TRUE(cache.find("key 4").has_value());
  for (int k : {1, 2, 3}) EXPECT_FALSE(cache.find(fmt::format("key {}", k)).has_value());
}

// A cache that cannot be written: the object is built and used for the process, and said so.
TEST_F(Codegen, UnwritableCacheStillCompiles) {
  std::ofstream(dir_ / "file") << "x";
  ::setenv("TWOBODY_CACHE_DIR", (dir_ / "file" / "sub").c_str(), 1);
  std::mt19937_64 rng(2);
  const oracle::Rows r = make_rows(0, 40, rng);
  const twobody::PairTable t = table_of(r);
  const auto f = twobody::PairExpression::parse("a.x / (1 + b.t) - sum(a * b)", t.schema());
  auto choice = twobody::cpu::choose_rows(f.compiled(), twobody::CpuCodegen::On, 1, 1, false);
  EXPECT_NE(choice.how.find("not cached"), std::string::npos) << choice.how;
  expect_same_rows(f, t, t, choice);
}

// Eight processes compiling one key at once (this binary again, the child test below): one whole
// entry, no temporary file left, and the same sum in each.
TEST_F(Codegen, EightProcessesShareOneEntry) {
  std::vector<pid_t> pids;
  const std::string filter = "--gtest_filter=CodegenChild.CompileAndSum";
  for (int k = 0; k < 8; ++k) {
    const std::string out = (dir_ / fmt::format("sum-{}", k)).string();
    const std::string env_out = "TWOBODY_CODEGEN_CHILD=" + out;
    std::vector<std::string> envs{env_out, "TWOBODY_CACHE_DIR=" + dir_.string()};
    for (char** e = environ; *e; ++e)
      if (std::strncmp(*e, "TWOBODY_", 8) != 0) envs.push_back(*e);
    std::vector<char*> envp, argv{const_cast<char*>("/proc/self/exe"), const_cast<char*>(filter.c_str()), nullptr};
    for (auto& e : envs) envp.push_back(e.data());
    envp.push_back(nullptr);
    pid_t pid = 0;
    ASSERT_EQ(posix_spawn(&pid, "/proc/self/exe", nullptr, nullptr, argv.data(), envp.data()), 0);
    pids.push_back(pid);
  }
  for (pid_t pid : pids) {
    int status = 0;
    ASSERT_EQ(::waitpid(pid, &status, 0), pid);
    EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0) << "child status " << status;
  }
  std::string first;
  for (int k = 0; k < 8; ++k) {
    std::ifstream in(dir_ / fmt::format("sum-{}", k));
    std::string s((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    EXPECT_NE(s.find("compiled object"), std::string::npos) << s;
    s = s.substr(0, s.find('\n'));
    if (k == 0) first = s;
    EXPECT_EQ(s, first);
    EXPECT_FALSE(s.empty());
  }
  EXPECT_EQ(entries(), 1u);
  for (const auto& e : fs::directory_iterator(dir_ / "kernels" / "v1"))
    EXPECT_TRUE(e.path().extension() == ".so" || e.path().filename() == ".prune") << e.path();
  const twobody::KernelCache cache(dir_ / "kernels" / "v1");
  ASSERT_EQ(cache.list().size(), 1u);
  EXPECT_FALSE(cache.list()[0].summary.empty());
}

// The child of EightProcessesShareOneEntry: does nothing unless TWOBODY_CODEGEN_CHILD names its
// output file. Writes the sum's bits and the evaluator line.
TEST(CodegenChild, CompileAndSum) {
  const char* out = std::getenv("TWOBODY_CODEGEN_CHILD");
  if (!out) GTEST_SKIP() << "run by Codegen.EightProcessesShareOneEntry";
  std::mt19937_64 rng(7);
  const oracle::Rows r = make_rows(0, 400, rng);
  const twobody::PairTable t = table_of(r);
  const auto f = twobody::PairExpression::parse("sum(abs(a - b)^p)^(1/p) + a.t * b.t", t.schema(), nullptr, corpus_params());
  twobody::Statistic s;
  s.reduction = twobody::reduce::Sum{};
  twobody::RunOptions opt;
  opt.threads = 1;
  const auto res = twobody::run_expression(f, s, t, nullptr, opt, twobody::CpuCodegen::On);
  std::uint64_t bits;
  std::memcpy(&bits, &res.value_sum.at(0), 8);
  std::ofstream(out) << bits << "\n" << res.info.plan.substr(res.info.plan.find("evaluator:")) << "\n";
}

}  // namespace
