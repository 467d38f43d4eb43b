#pragma once
// The one refusal of a pair list beyond RunOptions::max_pairs, wherever a backend, a chunked run
// or a distribution finds it.
#include <cstddef>
#include <string>

#include "twobody/error.hpp"

namespace twobody {

// `narrow`: what the user narrows ("the range" of a statistic, "eps" of a join).
[[noreturn]] inline void throw_pair_limit(std::size_t max_pairs, const char* narrow = "the range") {
  throw Error(ErrorKind::Resource, "pair list exceeds the limit of " + std::to_string(max_pairs) + " pairs; narrow " +
                                       narrow + " or raise RunOptions::max_pairs");
}

}  // namespace twobody
