#pragma once
// From syntax to the typed IR: names resolved against the schemas and parameters, types checked,
// constants folded, equal subexpressions shared. Every error is Error(Config) at its column.
#include "twobody/detail/expr/ir.hpp"
#include "twobody/detail/expr/syntax.hpp"
#include "twobody/expression.hpp"

namespace twobody::expr {

// The graph of `text` (its root in g.root); a `where` predicate, when given, becomes the Filter
// node over it. Parameters take slots in the order the text first uses them.
Graph build_graph(const Source& text, const Source* where, const Schema& a, const Schema& b,
                  const ExpressionParams& params);

}  // namespace twobody::expr
