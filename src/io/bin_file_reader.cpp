// Corrfunc's bin files ("lo hi" a line, consecutive bins touching): Binning::from_file.
// Read and parsed without iostreams (std::from_chars: no locale, no stream state): the stream
// form crashed in a Python 3.12 process on the device machine once an engine run had taken place
// (cause not found; 2026-11-27), and from_chars is exact and strict besides.
#include <fmt/format.h>

#include <cerrno>
#include <charconv>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "twobody/binning.hpp"
#include "twobody/error.hpp"

namespace twobody {

namespace {

std::string whole_file(const std::string& path) {
  std::unique_ptr<std::FILE, int (*)(std::FILE*)> f(std::fopen(path.c_str(), "rb"), std::fclose);
  if (!f) throw_input(fmt::format("{}: cannot open bin file: {}", path, std::strerror(errno)));
  std::string text;
  char buf[1 << 16];
  for (std::size_t n; (n = std::fread(buf, 1, sizeof buf, f.get())) > 0;) {
    text.append(buf, n);
    if (text.size() > (std::size_t(64) << 20)) throw_input(fmt::format("{}: not a bin file (over 64 MB)", path));
  }
  if (std::ferror(f.get())) throw_input(fmt::format("{}: cannot read bin file: {}", path, std::strerror(errno)));
  return text;
}

bool blank(char c) { return c == ' ' || c == '\t' || c == '\r' || c == '\v' || c == '\f'; }

// The numbers of one line (without its comment), or the token that is not one.
std::vector<double> numbers(std::string_view line, const std::string& where) {
  std::vector<double> v;
  std::size_t i = 0;
  while (true) {
    while (i < line.size() && blank(line[i])) ++i;
    if (i == line.size()) return v;
    std::size_t j = i;
    while (j < line.size() && !blank(line[j])) ++j;
    std::string_view token = line.substr(i, j - i);
    std::string_view digits = token.size() > 1 && token[0] == '+' ? token.substr(1) : token;
    double x = 0;
    const auto [end, ec] = std::from_chars(digits.data(), digits.data() + digits.size(), x);
    if (ec == std::errc::result_out_of_range)
      throw_input(fmt::format("{}: '{}' is beyond float64's range", where, token));
    if (ec != std::errc() || end != digits.data() + digits.size())
      throw_input(fmt::format("{}: '{}' is not a number (a bin line is 'lo hi')", where, token));
    v.push_back(x);
    i = j;
  }
}

}  // namespace

Binning Binning::from_file(const std::string& path) {
  const std::string text = whole_file(path);
  std::vector<double> e;
  std::size_t lineno = 0;
  const std::size_t bom = text.rfind("\xEF\xBB\xBF", 0) == 0 ? 3 : 0;  // a UTF-8 byte-order mark
  for (std::size_t start = bom; start < text.size();) {
    std::size_t stop = text.find('\n', start);
    if (stop == std::string::npos) stop = text.size();
    std::string_view line(text.data() + start, stop - start);
    start = stop + 1;
    ++lineno;
    if (const auto hash = line.find('#'); hash != std::string_view::npos) line = line.substr(0, hash);
    const std::string where = fmt::format("{}:{}", path, lineno);
    const std::vector<double> v = numbers(line, where);
    if (v.empty()) continue;  // blank line
    if (v.size() != 2) throw_input(fmt::format("{}: a bin line needs two numbers, 'lo hi'", where));
    const double lo = v[0], hi = v[1];
    if (!std::isfinite(lo) || !std::isfinite(hi)) throw_input(fmt::format("{}: bin edges must be finite", where));
    if (e.empty()) {
      e.push_back(lo);
    } else if (lo != e.back()) {
      throw_config(fmt::format("{}: bin starts at {} but the previous bin ends at {}", where, lo, e.back()));
    }
    e.push_back(hi);
  }
  if (e.empty()) throw_input(fmt::format("{}: the bin file holds no bins", path));
  try {
    return from_edges(std::move(e));
  } catch (const Error& err) {
    throw Error(err.kind(), fmt::format("{}: {}", path, err.what()));
  }
}

}  // namespace twobody
