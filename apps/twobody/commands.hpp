#pragma once
// The families of subcommands, each a list of descriptors (subcommand.hpp) in the order
// `twobody --help` lists them; main() adds the families in the order below.
#include <vector>

#include "subcommand.hpp"

namespace twobody::cli {

std::vector<Subcommand> histogram_commands();     // sdh, paircount, rdf, angular
std::vector<Subcommand> correlation_commands();   // xi, wtheta
std::vector<Subcommand> clustering2d_commands();  // rppi, smu, xi-rppi, wp, xi-smu
std::vector<Subcommand> scalar_commands();        // kk, nk
std::vector<Subcommand> neighbour_commands();     // neighbours, kde
std::vector<Subcommand> matrix_commands();        // matrix
std::vector<Subcommand> vector_commands();        // join, knn
std::vector<Subcommand> custom_commands();        // custom
std::vector<Subcommand> lattice_commands();       // potential, density, gridding
std::vector<Subcommand> forces_commands();        // forces
std::vector<Subcommand> generate_commands();      // generate
std::vector<Subcommand> cache_commands();         // cache

}  // namespace twobody::cli
