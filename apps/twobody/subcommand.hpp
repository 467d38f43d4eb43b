#pragma once
// A subcommand of the command line as one declaration, a Command<State>: its name and help line,
// the common options it takes (Features), the options of its own and what it runs. State holds
// the values of all its options; each table entry owns one. main() adds every entry of the table
// (commands.hpp) to the CLI11 app, which runs the one the arguments name.
#include <CLI/CLI.hpp>

#include <concepts>
#include <functional>
#include <memory>

#include "common_options.hpp"
#include "process_phases.hpp"
#include "progress_bar.hpp"

namespace twobody::cli {

// What a run gets besides its options: the descriptor's Features (the default columns, the binned
// variable's name) and the progress bar, to finish before the command writes.
struct Context {
  const Features& features;
  ProgressBar& bar;
};

// The options of a command that takes the common ones (--data, the bins, --box, --backend,
// --explain, ...): they are its member `o`.
template <class State>
concept TakesCommonOptions = requires(State& s) {
  { s.o } -> std::same_as<CommonOptions&>;
};
// A command with --explain in its options (the common ones, or the lattice maps' own): it prints the
// process's phases too (process_phases.hpp).
template <class State>
concept Explains = requires(State& s) {
  { s.o.explain } -> std::convertible_to<bool>;
};

// An output named like one of the command's inputs (-o, --save-counts, --covariance against --data,
// --randoms, --rr, --bins, ...; the same file by any path) would destroy it: Error(Config) before
// anything is read.
void refuse_outputs_over_inputs(const CLI::App& cmd);

template <class State>
struct Command {
  const char* name;
  const char* help;
  // Which common options it takes (add_common_options), added first; unused without a member `o`.
  Features features{};
  // Its own options, after the common ones (their order is the help text's); null: none.
  void (*add_options)(CLI::App& cmd, State& s) = nullptr;
  void (*run)(const State& s, const Context& c) = nullptr;
  // Runnable examples, one command a line, printed at the end of --help (tests/cli: each runs).
  const char* examples = nullptr;
};

// An entry of the table: a descriptor and the state its options are parsed into.
class Subcommand {
 public:
  // Implicit: a family returns the list of its descriptors, {sdh, paircount, ...}.
  template <class State>
  Subcommand(const Command<State>& c)
      : add_([c, state = std::make_shared<State>()](CLI::App& app, ProgressBar& bar) {
          CLI::App* cmd = app.add_subcommand(c.name, c.help);
          if constexpr (TakesCommonOptions<State>) add_common_options(*cmd, state->o, c.features);
          if (c.add_options) c.add_options(*cmd, *state);
          if (c.examples) cmd->footer(std::string("Examples:\n") + c.examples);
          cmd->callback([c, state, &bar, cmd] {
            refuse_outputs_over_inputs(*cmd);
            bool explain = false;
            if constexpr (Explains<State>) explain = state->o.explain;
            if (explain) ProcessPhases::get().enable();
            c.run(*state, Context{c.features, bar});
            if (explain) bar.print(ProcessPhases::get().text());
          });
        }) {}

  void add_to(CLI::App& app, ProgressBar& bar) const { add_(app, bar); }

 private:
  std::function<void(CLI::App&, ProgressBar&)> add_;
};

}  // namespace twobody::cli
