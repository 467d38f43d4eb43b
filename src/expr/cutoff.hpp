#pragma once
// Where a pair expression confines its pairs to a distance: the traversal may then skip pairs of
// points farther apart than that on a cell grid (the engine's own, cpu/grid_index.hpp), with the
// same results as visiting every pair, since a skipped pair would have produced nothing.
#include <optional>

#include "twobody/detail/expr/compiled.hpp"

namespace twobody::expr {

// How the Euclidean distance D of the two points' coordinates appears at a node: not at all, as D
// (sqrt(sum((a-b)^2)), norm(a-b), sqrt of the coordinates' squared differences summed), or as D²
// (the same without the sqrt). Every coordinate must take part, each once; b - a serves as a - b.
enum class DistanceForm { None, Distance, Squared };
DistanceForm distance_form(const Graph& g, int id);

// The value as the points' distance (Distance) or its square (Squared) with the built-in
// Euclidean key's bits: Σ_k (a_k − b_k)² over the whole rows in stored order (sum((a-b)^2),
// sum((b-a)*(b-a)), dot(a-b, a-b)), under sqrt for the distance (or norm(a-b)); no --where. The
// point paths' key is that sum, so their bins are the expression's (engine/expression_run.cpp).
DistanceForm key_form(const Compiled& c);

// A predicate that is only such a distance (or square) against a bound: D < K, D <= K, K > D or
// K >= D, K of literals and scalar parameters, finite and positive; no --where. Its pairs are
// those with D below K (`inclusive`: up to K).
struct KeyPredicate {
  DistanceForm form = DistanceForm::None;
  double bound = 0;
  bool inclusive = false;
};
std::optional<KeyPredicate> key_predicate(const Compiled& c);

// The distance beyond which no pair gives anything, from the predicate: the --where predicate, or
// the pair function itself when it is a predicate (a Bool is a count's, pair list's or per-point
// count's pairs where true), is a conjunction (and) one of whose terms is D < K, D <= K, K > D or
// K >= D (D² with K² for the squared form), K of literals and scalar parameters only. nullopt
// when there is none, or K is not finite and positive.
std::optional<double> predicate_cutoff(const Compiled& c);

// The distance beyond which no pair's value is below `hi`, when the value (under its --where, if
// any) is D or D²: for outputs that take values in a range [lo, hi) (or [lo, hi]). nullopt otherwise.
std::optional<double> value_cutoff(const Compiled& c, double hi);

// Whether the pair function (and its --where) gives f(a, b) and f(b, a) the same bits for every
// pair of one table, proven from the text: the expression with a and b swapped is the same after
// sorting the operands of +, ×, and, or, ==, != (exact IEEE operations, commutative bit for bit),
// writing x > y as y < x, and sorting the operands of a − b directly under an even function (abs,
// an even integer power, x·x), which maps ±(a − b) to one value (a − b and b − a are negatives
// exactly, zero included as +0). An auto run on a grid may then visit each pair of cells once.
// False where it cannot tell (min and max keep their operands' order: min(0, −0) is not min(−0, 0)).
bool is_symmetric(const Compiled& c);

}  // namespace twobody::expr
