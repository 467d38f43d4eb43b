#pragma once
// The scalar-field correlation commands, kk and nk (TreeCorr's KK and NK, exact).
#include <CLI/CLI.hpp>

#include "common_options.hpp"
#include "progress_bar.hpp"

namespace twobody::cli {

void add_scalar_commands(CLI::App& app, CommonOptions& o, ProgressBar& bar);

}  // namespace twobody::cli
