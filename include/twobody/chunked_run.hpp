#pragma once
// Point sets larger than one launch can take (the CUDA backend's 32-bit indices, or its device
// memory): the unique pairs are split by chunks of at most `chunk` points — auto: each chunk with
// itself and with every later chunk (cross); cross: every chunk of A with every chunk of B — and
// each chunk pair runs as a plan of its own; the outputs are merged (counts, weighted sums and
// jackknife region counts added, pair lists and per-point arrays shifted to the whole sets'
// indices, matrix blocks placed). Backend-agnostic: the CPU tests check it with the CPU backend.
#include <cstddef>
#include <functional>

#include "twobody/backend.hpp"

namespace twobody {

Result run_in_chunks(const Plan& plan, std::size_t chunk, const std::function<Result(const Plan&)>& run_one);

}  // namespace twobody
