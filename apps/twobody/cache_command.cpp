// cache: the kernel cache of compiled pair expressions (src/engine/kernel_cache.hpp): list its
// entries, clear it, or prune it to TWOBODY_CACHE_MAX_BYTES.
#include <fmt/chrono.h>
#include <fmt/format.h>

#include <chrono>
#include <iostream>

#include "commands.hpp"
#include "twobody/detail/engine/kernel_cache.hpp"

namespace twobody::cli {

namespace {

struct CacheOptions {
  std::string action;
};

void run_cache_command(const CacheOptions& s, const Context&) {
  const KernelCache cache(KernelCache::default_dir());
  if (s.action == "clear") {
    const std::size_t n = cache.clear();
    std::cout << fmt::format("removed {} {} from {}\n", n, n == 1 ? "entry" : "entries", cache.dir().string());
    return;
  }
  if (s.action == "prune") {
    const std::uintmax_t max = KernelCache::default_max_bytes();
    const std::size_t n = cache.prune(max);
    std::cout << fmt::format("removed {} {} from {} (at most {} bytes)\n", n, n == 1 ? "entry" : "entries", cache.dir().string(), max);
    return;
  }
  const auto entries = cache.list();
  std::uintmax_t total = 0;
  for (const auto& e : entries) total += e.bytes;
  std::cout << fmt::format("# {}: {} {}, {} bytes (newest first)\n", cache.dir().string(), entries.size(),
                           entries.size() == 1 ? "entry" : "entries", total);
  for (const auto& e : entries) {
    const auto when = std::chrono::system_clock::now() +
                      std::chrono::duration_cast<std::chrono::system_clock::duration>(e.last_used - std::filesystem::file_time_type::clock::now());
    std::cout << fmt::format("{}  {:>8}  {:%Y-%m-%d %H:%M:%S}  {}\n", e.path.filename().string(), e.bytes,
                             std::chrono::floor<std::chrono::seconds>(when), e.summary.empty() ? "(damaged)" : e.summary);
  }
}

const Command<CacheOptions> cache_command{
    .name = "cache",
    .help = "the kernel cache of compiled pair expressions: list, clear or prune it ($TWOBODY_CACHE_DIR)",
    .add_options =
        [](CLI::App& cmd, CacheOptions& s) {
          cmd.add_option("action", s.action, "list | clear | prune (to TWOBODY_CACHE_MAX_BYTES, default 1 GiB)")
              ->required()
              ->check(CLI::IsMember({"list", "clear", "prune"}));
        },
    .run = run_cache_command,
    .examples = "  twobody cache list\n",
};

}  // namespace

std::vector<Subcommand> cache_commands() { return {cache_command}; }

}  // namespace twobody::cli
