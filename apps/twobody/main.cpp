// The twobody command line: one subcommand per statistic, each a descriptor (subcommand.hpp) in a
// family's file, here put into one table; errors become exit codes (twobody/error.hpp).
#include <CLI/CLI.hpp>

#include <iostream>
#include <new>
#include <string>

#include "commands.hpp"
#include "mpi_session.hpp"
#include "twobody/config.hpp"
#include "twobody/detail/io/foreign_read.hpp"
#include "twobody/error.hpp"

using namespace twobody;
using namespace twobody::cli;

namespace {

// Every subcommand, in the order `twobody --help` lists them.
std::vector<Subcommand> command_table() {
  std::vector<Subcommand> table;
  for (const auto& family : {histogram_commands(), correlation_commands(), clustering2d_commands(), scalar_commands(),
                             neighbour_commands(), matrix_commands(), vector_commands(), custom_commands(), lattice_commands(), forces_commands(),
                             generate_commands(), cache_commands()})
    table.insert(table.end(), family.begin(), family.end());
  return table;
}

}  // namespace

int main(int argc, char** argv) {
  const MpiSession mpi(argc, argv);
  io::install_foreign_crash_report();
  CLI::App app{"twobody: exact 2-body statistics (pair counts, histograms, correlation functions) on CPU and GPU"};
  app.require_subcommand(1);
  app.set_version_flag("--version", std::string(kVersion));
  ProgressBar bar;
  const std::vector<Subcommand> table = command_table();
  for (const Subcommand& command : table) command.add_to(app, bar);

  // CLI11 would call an unknown subcommand an unexpected argument: name it as what it is.
  if (argc > 1 && argv[1][0] != '-') {
    const std::string name = argv[1];
    bool known = false;
    for (const CLI::App* sub : app.get_subcommands({})) known |= sub->get_name() == name;
    if (!known) {
      std::cerr << "twobody: error: unknown subcommand '" << name << "' (twobody --help lists them)\n";
      return 2;
    }
  }
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    const int code = app.exit(e);
    return code == 0 ? 0 : 2;
  } catch (const Error& e) {
    bar.finish();
    std::cerr << "twobody: error: " << e.what() << '\n';
    return e.exit_code();
  } catch (const std::bad_alloc&) {
    bar.finish();
    std::cerr << "twobody: error: out of memory (the input or the requested output is too large for this machine)\n";
    return static_cast<int>(ErrorKind::Resource);
  } catch (const std::exception& e) {
    bar.finish();
    std::cerr << "twobody: internal error: " << e.what() << '\n';
    return 1;
  }
  return 0;
}
