#include "device_visibility.hpp"

namespace twobody::cli {

std::optional<std::string> default_device_visibility(const char* current) {
  if (!current) return "0";
  const std::string list = current;
  const std::size_t comma = list.find(',');
  if (comma == std::string::npos) return std::nullopt;  // one entry (or none): nothing to narrow
  const std::string first = list.substr(0, comma);
  // CUDA stops reading the list at its first invalid entry, so a bad first entry shows no device;
  // "-1" is the usual way of hiding them all. Either way, leave the list as the user wrote it.
  if (first.empty() || first[0] == '-') return std::nullopt;
  return first;
}

}  // namespace twobody::cli
