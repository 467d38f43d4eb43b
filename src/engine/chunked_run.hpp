#pragma once
// Point sets larger than one launch can take (the CUDA backend's 32-bit indices, or its device
// memory): the unique pairs are split by chunks of at most `chunk` points — auto: each chunk with
// itself and with every later chunk (cross); cross: every chunk of A with every chunk of B — and
// each chunk pair runs as a plan of its own; the outputs are merged (counts, weighted sums and
// jackknife region counts added, pair lists and per-point arrays shifted to the whole sets'
// indices, matrix blocks placed). Backend-agnostic: the CPU tests check it with the CPU backend.
// Up to `in_flight` chunk pairs run at once, each on a host thread of its own (the CUDA backend:
// two, so that one pair's uploads overlap the other's kernel, each on its own streams); outputs are
// merged in the chunk pairs' order whatever order they finish in, pair sinks and progress called
// one at a time.
#include <cstddef>
#include <functional>

#include "twobody/detail/engine/backend.hpp"

namespace twobody {

Result run_in_chunks(const Plan& plan, std::size_t chunk, const std::function<Result(const Plan&)>& run_one,
                     int in_flight = 1);

}  // namespace twobody
