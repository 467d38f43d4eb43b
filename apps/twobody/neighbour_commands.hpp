#pragma once
// The per-point command, neighbours: for every point, its partners within a range
// (OutputKind::PerPoint).
#include <CLI/CLI.hpp>

#include "common_options.hpp"
#include "progress_bar.hpp"

namespace twobody::cli {

void add_neighbour_commands(CLI::App& app, CommonOptions& o, ProgressBar& bar);

}  // namespace twobody::cli
