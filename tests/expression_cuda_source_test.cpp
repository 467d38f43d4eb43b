// The GPU's function of a pair expression (src/expr/emit_pair_cuda.cpp) computes the interpreter's
// values bit for bit. The generated CUDA source is compiled here by the host compiler, with
// __device__ and CUDA's two intrinsics it uses defined away (fabs and sqrt are IEEE's on both
// sides; exp, log and pow are twobody::portable's on both), and every pair of fresh random sets is
// compared with ExpressionRows::row for every case and every corpus expression. So what the device
// runs is checked on machines without a GPU; tests/cuda_expression_test.cpp runs it on one.
#include <dlfcn.h>
#include <fmt/format.h>
#include <gtest/gtest.h>
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
#include "twobody/detail/expr/emit_pair_cuda.hpp"
#include "twobody/detail/expr/emit_rows.hpp"
#include "twobody/detail/expr/pair_abi.hpp"
#include "twobody/expression.hpp"

namespace {

namespace fs = std::filesystem;
using namespace expression_cases;

bool same_bits(double x, double y) { return std::memcmp(&x, &y, sizeof x) == 0 || (x != x && y != y); }

using PairFn = double (*)(const twobody::expr::TbPairArgs*, unsigned long long, unsigned long long);
using TileFn = void (*)(const twobody::expr::TbPairArgs*, unsigned long long, unsigned long long, double*);

// The generated sources of `f`s, each in its own namespace with its functions' names suffixed _<k>
// and a tb_pair_<k> that calls them as the kernels do (the side's slots, then the pair), built
// into one shared object by the host compiler.
class HostBuild {
 public:
  explicit HostBuild(const std::vector<twobody::PairExpression>& fs) {
    const auto cc = twobody::cpu::host_compiler();
    if (!cc.error.empty()) throw std::runtime_error("no host compiler: " + cc.error);
    dir_ = fs::temp_directory_path() / fmt::format("twobody-cuda-source-test-{}", ::getpid());
    fs::create_directories(dir_);
    std::string src = "#include <cmath>\n#include <cstring>\n";
    src += twobody::expr::kRowsPrelude;  // config.hpp and twobody::portable
    src += R"(
#define __device__
#define __forceinline__ inline
static inline double __longlong_as_double(long long x) { double d; std::memcpy(&d, &x, sizeof d); return d; }
static inline double __ldg(const double* p) { return *p; }
using std::fabs;
using std::sqrt;
extern "C" double tb_exp(double x) { return twobody::portable::exp(x); }
extern "C" double tb_log(double x) { return twobody::portable::log_any(x); }
extern "C" double tb_pow(double x, double y) { return twobody::portable::pow(x, y); }
)";
    for (std::size_t k = 0; k < fs.size(); ++k) {
      std::string s = twobody::expr::emit_pair_cuda_source(fs[k].compiled());
      for (const std::string name : {"tb_load_a", "tb_load_b", "tb_pair_loaded", "tb_pair_tile"}) {
        std::size_t found = 0;
        for (auto at = s.find(name + "("); at != std::string::npos; at = s.find(name + "(", at + 1), ++found)
          s.replace(at, name.size(), fmt::format("{}_{}", name, k));
        if (found == 0) throw std::runtime_error("no " + name + " in the source");
      }
      s += fmt::format(
          "extern \"C\" double tb_pair_{0}(const TbPairArgs* args, unsigned long long i, unsigned long long j) {{\n"
          "  double sa[{1}], sb[{1}];\n  tb_load_a_{0}(args, i, sa);\n  tb_load_b_{0}(args, j, sb);\n"
          "  return tb_pair_loaded_{0}(args, i, j, sa, sb);\n}}\n",
          k, twobody::expr::kTbSideSlots);
      src += fmt::format("namespace g{} {{\n{}\n}}\n", k, s);
    }
    const fs::path cpp = dir_ / "device_on_host.cpp", so = dir_ / "device_on_host.so";
    std::ofstream(cpp) << src;
    const std::string cmd = fmt::format("{} {} -o {} {} 2> {}", cc.path, twobody::cpu::kRowsFlags, so.string(),
                                        cpp.string(), (dir_ / "log").string());
    if (std::system(cmd.c_str()) != 0) {
      std::ifstream in(dir_ / "log");
      throw std::runtime_error("the host compiler rejected the device source: " +
                               std::string(std::istreambuf_iterator<char>(in), {}).substr(0, 4000));
    }
    lib_ = dlopen(so.c_str(), RTLD_NOW | RTLD_LOCAL);
    if (!lib_) throw std::runtime_error(dlerror());
    for (std::size_t k = 0; k < fs.size(); ++k) {
      fns_.push_back(reinterpret_cast<PairFn>(dlsym(lib_, fmt::format("tb_pair_{}", k).c_str())));
      tiles_.push_back(reinterpret_cast<TileFn>(dlsym(lib_, fmt::format("tb_pair_tile_{}", k).c_str())));
      if (!fns_.back() || !tiles_.back()) throw std::runtime_error("no tb_pair_ or tb_pair_tile_" + std::to_string(k));
    }
  }
  ~HostBuild() {
    if (lib_) dlclose(lib_);
    std::error_code ec;
    fs::remove_all(dir_, ec);
  }
  PairFn fn(std::size_t k) const { return fns_.at(k); }
  TileFn tile(std::size_t k) const { return tiles_.at(k); }

 private:
  fs::path dir_;
  void* lib_ = nullptr;
  std::vector<PairFn> fns_;
  std::vector<TileFn> tiles_;
};

// Every pair of a × b (b may be a) by the interpreter, by the device functions pair by pair, and by
// the matrix's tiles as its kernel lays them (a lane's first column, the rows of its warp).
void expect_same_pairs(const twobody::PairExpression& f, PairFn fn, TileFn tile, const twobody::PairTable& a,
                       const twobody::PairTable& b) {
  const twobody::cpu::ExpressionRows rows(f.compiled(), a, b, 2);
  auto ws = rows.workspace();
  const twobody::expr::TbPairArgs args = twobody::expr::make_pair_args(
      rows.argument_columns().data(), rows.argument_columns().data(), rows.argument_columns().size(),
      rows.argument_values().data(), rows.size_a(), rows.size_b(), static_cast<unsigned long long>(f.compiled().g.dim));
  std::vector<double> want(a.size() * b.size());
  for (std::size_t i = 0; i < a.size(); ++i) {
    rows.row(i, 0, b.size(), want.data() + i * b.size(), ws);
    for (std::size_t j = 0; j < b.size(); ++j) {
      const double got = fn(&args, i, j);
      ASSERT_TRUE(same_bits(got, want[i * b.size() + j])) << f.text() << " at (" << i << ", " << j << "): interpreter "
                                                          << want[i * b.size() + j] << ", device source " << got;
    }
  }
  using twobody::expr::kTbTileCols, twobody::expr::kTbTileRows, twobody::expr::kTbTileStride;
  const std::size_t block_columns = kTbTileCols * kTbTileStride;
  double out[kTbTileRows * kTbTileCols];
  for (std::size_t i0 = 0; i0 < a.size(); i0 += kTbTileRows)
    for (std::size_t first = 0; first < b.size(); first += block_columns)
      for (std::size_t lane = 0; lane < kTbTileStride; ++lane) {
        tile(&args, i0, first + lane, out);
        for (std::size_t r = 0; r < kTbTileRows && i0 + r < a.size(); ++r)
          for (std::size_t c = 0; c < kTbTileCols; ++c) {
            const std::size_t i = i0 + r, j = first + lane + c * kTbTileStride;
            if (j >= b.size()) continue;
            ASSERT_TRUE(same_bits(out[r * kTbTileCols + c], want[i * b.size() + j]))
                << f.text() << " tile at (" << i << ", " << j << "): interpreter " << want[i * b.size() + j] << ", tile "
                << out[r * kTbTileCols + c];
          }
      }
}

TEST(CudaSource, EveryCaseAndCorpusExpressionEqualsTheInterpreter) {
  const auto seed = testing_support::fresh_seed();
  SCOPED_TRACE("seed " + std::to_string(seed));
  std::mt19937_64 rng(seed);
  // Every data kind of the cases (random, lattice on the edges, large offsets, duplicates): the
  // tables' schema is the same for all kinds, so one parse serves them all.
  std::vector<oracle::Rows> as, bs;
  for (int kind = 0; kind < 4; ++kind) {
    as.push_back(make_rows(kind, 17 + rng() % 20, rng));
    bs.push_back(make_rows(kind, 40 + rng() % 60, rng));
  }
  const twobody::PairTable a0 = table_of(as[0]), b0 = table_of(bs[0]);
  twobody::ExpressionParams p;
  p.scalars = {{"p", kP}, {"h", kH}, {"eps", 0.1}};
  p.vectors = {{"w", {1.0, 2.0, 0.5}}};
  std::vector<twobody::PairExpression> fs_cross, fs_auto;
  for (const Case& c : cases()) {
    fs_cross.push_back(twobody::PairExpression::parse(c.text, a0.schema(), &b0.schema(), p, c.where));
    fs_auto.push_back(twobody::PairExpression::parse(c.text, a0.schema(), nullptr, p, c.where));
  }
  for (const auto& v : expression_corpus::valid()) {
    fs_cross.push_back(twobody::PairExpression::parse(v.text, a0.schema(), &b0.schema(), p));
    fs_auto.push_back(twobody::PairExpression::parse(v.text, a0.schema(), nullptr, p));
  }
  std::vector<twobody::PairExpression> all = fs_cross;
  all.insert(all.end(), fs_auto.begin(), fs_auto.end());
  const HostBuild build(all);
  for (int kind = 0; kind < 4; ++kind) {
    const twobody::PairTable a = table_of(as[kind]), b = table_of(bs[kind]);
    for (std::size_t k = 0; k < fs_cross.size(); ++k) {
      SCOPED_TRACE(fs_cross[k].text() + " where " + fs_cross[k].where() + ", data kind " + std::to_string(kind));
      expect_same_pairs(fs_cross[k], build.fn(k), build.tile(k), a, b);
      expect_same_pairs(fs_auto[k], build.fn(fs_cross.size() + k), build.tile(fs_cross.size() + k), a, a);
    }
  }
}

TEST(CudaSource, IsDeterministicAndHoldsNoParameterValue) {
  twobody::Schema s;
  s.dim = 3;
  s.names = {"t"};
  s.exact_in_float32 = {false};
  twobody::ExpressionParams p1, p2;
  p1.scalars = {{"h", 0.5}};
  p2.scalars = {{"h", 0.7}};
  const auto f1 = twobody::PairExpression::parse("exp(-dot(a-b, a-b)/(2*h^2)) * a.t", s, nullptr, p1);
  const auto f2 = twobody::PairExpression::parse("exp(-dot(a-b, a-b)/(2*h^2)) * a.t", s, nullptr, p2);
  const std::string s1 = twobody::expr::emit_pair_cuda_source(f1.compiled());
  EXPECT_EQ(s1, twobody::expr::emit_pair_cuda_source(f2.compiled()));
  EXPECT_EQ(s1.find("#include"), std::string::npos) << "NVRTC compiles the source alone";
  for (const char* f : {"extern \"C\" __device__ void tb_load_a(", "extern \"C\" __device__ void tb_load_b(",
                        "extern \"C\" __device__ double tb_pair_loaded("})
    EXPECT_NE(s1.find(f), std::string::npos) << f;
}

TEST(CudaSource, SlotsAndTheParameterBankOverflowIntoTheColumns) {
  // A case with 18 scalars of each side and over 48 nodes (tests/expression_cases.hpp): the first
  // 16 of a side in its slots, the rest read where used; the first nodes' columns from `hot`.
  std::mt19937_64 rng(testing_support::fresh_seed());
  const twobody::PairTable table = table_of(make_rows(0, 5, rng));
  const char* text = nullptr;
  for (const Case& c : cases())
    if (std::string(c.text).find("(a.x + 18)") != std::string::npos) text = c.text;
  ASSERT_NE(text, nullptr);
  const auto f = twobody::PairExpression::parse(text, table.schema(), &table.schema(), {});
  ASSERT_GT(f.compiled().g.nodes.size(), static_cast<std::size_t>(twobody::expr::kTbHotNodes));
  const std::string src = twobody::expr::emit_pair_cuda_source(f.compiled());
  for (const char* part : {"s[15] = ", "= sa[15];", "= sb[15];", "args->hot[", "args->column["})
    EXPECT_NE(src.find(part), std::string::npos) << part << "\n" << src;
  EXPECT_EQ(src.find("s[16]"), std::string::npos) << src;
  // Its tile evaluates pair after pair in a loop (no loop over the dimension to share);
  // a sum over the dimension gets the shared loop, each row's element read once at k.
  EXPECT_NE(src.find("out[r * 4 + c] = tb_pair_loaded("), std::string::npos) << src;
  const auto l3 = twobody::PairExpression::parse("sum(abs(a - b)^3)", table.schema(), &table.schema(), {});
  const std::string tiled = twobody::expr::emit_pair_cuda_source(l3.compiled());
  for (const char* part : {"R", "_7_3 = ", "out[31] = R", "const double nea", "const double neb", "  double ea"})
    EXPECT_NE(tiled.find(part), std::string::npos) << part << "\n" << tiled;
  EXPECT_EQ(tiled.find("= tb_pair_loaded("), std::string::npos) << tiled;
}

}  // namespace
