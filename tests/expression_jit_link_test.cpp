// The run-time toolchain of pair expressions on the GPU (src/cuda/expr/jit_link.cpp), on any
// machine with the CUDA toolkit, GPU or not: the generated source compiles with NVRTC and links
// with the embedded kernels' LTO-IR into PTX and a cubin for sm_90; the PTX holds every kernel and
// no fused multiply-add (the float64 rule: the CPU's roundings); a source NVRTC rejects is
// Error(Backend) with its log. Skipped, saying why, where NVRTC or nvJitLink is missing.
#include <gtest/gtest.h>

#include <regex>
#include <string>

#include "twobody/detail/cuda/expr/expression_launch.hpp"
#include "twobody/detail/cuda/expr/jit_link.hpp"
#include "twobody/detail/expr/emit_pair_cuda.hpp"
#include "twobody/error.hpp"
#include "twobody/expression.hpp"

namespace {

twobody::Schema schema() {
  twobody::Schema s;
  s.dim = 3;
  s.names = {"t", "m"};
  s.exact_in_float32 = {false, false};
  return s;
}

#define SKIP_WITHOUT_TOOLCHAIN()                                                                    \
  do {                                                                                              \
    if (!twobody::cuda::jit_toolchain().error.empty()) GTEST_SKIP() << twobody::cuda::jit_toolchain().error; \
  } while (0)

TEST(JitLink, EveryKernelLinksWithTheExpressionAndNoFma) {
  SKIP_WITHOUT_TOOLCHAIN();
  twobody::ExpressionParams p;
  p.scalars = {{"h", 0.5}, {"q", 2.5}};
  p.vectors = {{"w", {1.0, 2.0, 0.5}}};
  const char* texts[] = {
      "sqrt(sum((a - b)^2))",
      "exp(-dot(a-b, a-b)/(2*h^2)) * a.t - log(1 + b.m^2) + pow(abs(a[0] - b[1]), q)",
      "sum(w * abs(a - b)^3)^(1/3)",
      "a.t < b.t and abs(a[0] - b[0]) < 5",
      "min(max(a[0], b[1]), a[2]) + if(a.t > 0, sum(a * b), -max(a - b))",
  };
  for (const char* text : texts) {
    SCOPED_TRACE(text);
    const auto f = twobody::PairExpression::parse(text, schema(), nullptr, p);
    const std::string ptx = twobody::cuda::jit_link_expression(twobody::expr::emit_pair_cuda_source(f.compiled()), 90, true);
    for (const char* k : {twobody::cuda::kExprMaxAbsKernel, twobody::cuda::kExprSumKernel, twobody::cuda::kExprCountKernel,
                          twobody::cuda::kExprHistogramKernel, twobody::cuda::kExprPerPointCountKernel,
                          twobody::cuda::kExprPerPointValueKernel, twobody::cuda::kExprPairsKernel,
                          twobody::cuda::kExprMatrixKernel})
      EXPECT_NE(ptx.find(std::string(".entry ") + k), std::string::npos) << k;
    EXPECT_EQ(ptx.find("fma."), std::string::npos) << "a contraction into FMA changes the float64 rule's roundings";
    EXPECT_EQ(ptx.find("tb_pair"), std::string::npos) << "the link inlines the expression into the kernels";
    EXPECT_EQ(ptx.find("tb_load_"), std::string::npos) << "and the loads of a side's slots";
    EXPECT_NE(ptx.find("mul.rn.f64"), std::string::npos);
    const std::string cubin = twobody::cuda::jit_link_expression(twobody::expr::emit_pair_cuda_source(f.compiled()), 90);
    ASSERT_GT(cubin.size(), 4u);
    EXPECT_EQ(cubin.substr(0, 4), std::string("\x7f" "ELF"));
  }
}

TEST(JitLink, RejectedSourceIsABackendErrorWithTheLog) {
  SKIP_WITHOUT_TOOLCHAIN();
  try {
    twobody::cuda::jit_link_expression("extern \"C\" __device__ double tb_pair(int) { return undeclared_name; }", 90);
    FAIL() << "no error";
  } catch (const twobody::Error& e) {
    EXPECT_EQ(e.kind(), twobody::ErrorKind::Backend);
    EXPECT_NE(std::string(e.what()).find("undeclared_name"), std::string::npos) << e.what();
  }
}

TEST(JitLink, TheToolchainNamesItsVersionsAndTheKernelsTheirHash) {
  SKIP_WITHOUT_TOOLCHAIN();
  EXPECT_TRUE(std::regex_search(twobody::cuda::jit_toolchain().versions, std::regex("NVRTC [0-9]+\\.[0-9]+, nvJitLink [0-9]+\\.[0-9]+")))
      << twobody::cuda::jit_toolchain().versions;
  EXPECT_GT(twobody::cuda::expression_kernels_image().size(), 1000u);
  EXPECT_EQ(twobody::cuda::expression_kernels_hash().size(), 16u);
}

}  // namespace
