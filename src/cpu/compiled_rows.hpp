#pragma once
// The CPU's second evaluator of pair expressions: the interpreter's program as C++
// (expr/emit_rows.cpp), built by the system compiler into a shared object kept in the kernel
// cache (engine/kernel_cache.hpp) and loaded with dlopen. Whether a run takes it is
// --cpu-codegen's: off (the interpreter), on (compiled whenever a compiler works), auto (compiled
// when cached, or when the interpreter's estimated time is well above a compile's). A compiler
// that is missing or fails leaves the interpreter, with the reason in the plan: never an error,
// never another value (both give the rule's bits, docs/expressions.md).
#include <string>
#include <string_view>

#include "twobody/detail/expr/compiled.hpp"
#include "twobody/detail/expr/rows_abi.hpp"
#include "twobody/expression.hpp"

namespace twobody::cpu {

struct RowsChoice {
  expr::TbRowsFn fn = nullptr;  // null: the interpreter
  std::string how;              // one line for the plan: which evaluator, and why
};

// The evaluator of `c` for a run of `pairs` pairs on `threads` threads. `dry` (explain): nothing is
// compiled, `how` says what a run would do.
RowsChoice choose_rows(const expr::Compiled& c, twobody::CpuCodegen mode, double pairs, int threads, bool dry);

// The CPU's estimated seconds for `pairs` evaluations of `c` on `threads` threads: the
// interpreter's, or (unless `mode` is Off) a compile and the compiled object's where that is less
// (the object ran 1.4–7.6× the interpreter, bench/RESULTS.md: 2 assumed). For `auto`'s choice of
// a backend.
double cpu_expression_seconds(const expr::Compiled& c, double pairs, int threads, twobody::CpuCodegen mode);

// The compiler a run would call and its first --version line, or why there is none: $TWOBODY_CXX,
// else $CXX, else the compiler that built twobody. Asked once a process for each path.
struct HostCompiler {
  std::string path, version, error;  // error empty: usable
};
HostCompiler host_compiler();

// The flags of every build (no contraction into FMA, no fast-math: the rule's bits).
extern const char* const kRowsFlags;

}  // namespace twobody::cpu
