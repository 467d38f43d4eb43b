#include "twobody/device_memory.hpp"

#include <fmt/format.h>

#include <atomic>
#include <cctype>
#include <cmath>
#include <cstdlib>

#include "twobody/error.hpp"

namespace twobody {

namespace {
std::atomic<std::size_t> limit{0};
}  // namespace

void set_device_memory_limit(std::size_t bytes) { limit = bytes; }
std::size_t device_memory_limit() { return limit; }

std::size_t parse_memory_size(const std::string& text, const std::string& what) {
  const auto bad = [&](const char* why) {
    const std::string shown = text.empty() ? "''" : text;
    throw_config(fmt::format("{}{}: {} (a size such as 2G, 512M, 1.5GiB or a number of bytes)",
                             what.empty() ? "" : what + " ", shown, why));
  };
  const char* s = text.c_str();
  char* end = nullptr;
  const double number = std::strtod(s, &end);
  if (end == s || !std::isfinite(number) || number < 0) bad("not a size");
  std::string unit(end);
  for (char& c : unit) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  double scale = 1;
  if (!unit.empty()) {
    const std::string prefixes = "KMGT";
    const std::size_t p = prefixes.find(unit[0]);
    const std::string rest = p == std::string::npos ? unit : unit.substr(1);
    if (p != std::string::npos) scale = std::ldexp(1.0, 10 * static_cast<int>(p + 1));
    if (!(rest.empty() || rest == "B" || (p != std::string::npos && rest == "IB"))) bad("not a size");
  }
  const double bytes = number * scale;
  if (bytes < 1024.0 * 1024.0) bad("below 1 MiB, a budget no run fits in");
  if (bytes > 0x1p60) bad("beyond any device");
  return static_cast<std::size_t>(bytes);
}

}  // namespace twobody
