#pragma once
// The C++ source of a pair expression's compiled CPU evaluator (rows_abi.hpp's tb_rows): the
// interpreter's program (expression_rows.cpp) written out as one function, the same float64
// operations on the same operands, so the compiled object gives the interpreter's bits. What
// changes is only where values live between operations: in registers of a fused loop over up to
// 256 partners instead of a lane buffer per operation.
#include <string>

#include "twobody/detail/expr/compiled.hpp"

namespace twobody::expr {

// The whole translation unit: the prelude (twobody::portable's exp, log, pow and the operations
// of ops.hpp, embedded at build time), then tb_rows_abi() and tb_rows(). Literals are written
// exactly (hexadecimal floats); parameters are read from TbRowArgs::value, so a new parameter
// value reuses the object. Deterministic: equal expressions give equal text.
std::string emit_rows_source(const Compiled& c);

// The embedded prelude (generated from include/twobody/config.hpp and extend/portable_math.hpp).
extern const char* const kRowsPrelude;

}  // namespace twobody::expr
