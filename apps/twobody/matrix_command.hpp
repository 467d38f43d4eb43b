#pragma once
// The dense matrix command, matrix: the distance (or angle) of every pair (OutputKind::Matrix).
#include <CLI/CLI.hpp>

#include "common_options.hpp"
#include "progress_bar.hpp"

namespace twobody::cli {

void add_matrix_command(CLI::App& app, CommonOptions& o, ProgressBar& bar);

}  // namespace twobody::cli
