// The kernel cache's files (kernel_cache.hpp).
#include "twobody/detail/engine/kernel_cache.hpp"

#include <fcntl.h>
#include <sys/file.h>
#include <unistd.h>

#include <fmt/format.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <sstream>
#include <system_error>

#include "twobody/error.hpp"

namespace twobody {

namespace fs = std::filesystem;

namespace {

constexpr char kMagic[8] = {'T', 'B', 'K', 'C', 'v', '1', 0, 0};
constexpr std::size_t kTrailerWords = 4;  // key length, summary length, object length, checksum
constexpr std::size_t kTrailerBytes = kTrailerWords * 8 + sizeof kMagic;

// FNV-1a, 64 bits, from `basis`: two bases give the 128 bits of a file name (a collision is only
// a miss: the stored key is compared whole) and one the object's checksum.
std::uint64_t fnv1a(const std::string& s, std::uint64_t basis) {
  std::uint64_t h = basis;
  for (unsigned char ch : s) {
    h ^= ch;
    h *= 0x100000001b3ull;
  }
  return h;
}
constexpr std::uint64_t kBasis = 0xcbf29ce484222325ull, kBasis2 = 0x84222325cbf29ce4ull;

void put_u64(std::string& s, std::uint64_t v) {
  for (int b = 0; b < 8; ++b) s.push_back(static_cast<char>((v >> (8 * b)) & 0xff));
}
std::uint64_t get_u64(const char* p) {
  std::uint64_t v = 0;
  for (int b = 0; b < 8; ++b) v |= static_cast<std::uint64_t>(static_cast<unsigned char>(p[b])) << (8 * b);
  return v;
}

bool read_file(const fs::path& p, std::string& out) {
  std::ifstream in(p, std::ios::binary);
  if (!in) return false;
  std::ostringstream s;
  s << in.rdbuf();
  out = std::move(s).str();
  return static_cast<bool>(in) || in.eof();
}

// The parts of an entry's bytes; false when the trailer, lengths or checksum are wrong.
struct Parsed {
  std::string key, summary;
};
bool parse_entry(const std::string& bytes, Parsed& p) {
  if (bytes.size() < kTrailerBytes) return false;
  const char* t = bytes.data() + bytes.size() - kTrailerBytes;
  if (std::memcmp(t + kTrailerWords * 8, kMagic, sizeof kMagic) != 0) return false;
  const std::uint64_t key_len = get_u64(t), summary_len = get_u64(t + 8), object_len = get_u64(t + 16), sum = get_u64(t + 24);
  const std::uint64_t body = bytes.size() - kTrailerBytes;
  if (key_len > body || summary_len > body || object_len > body || key_len + summary_len + object_len != body) return false;
  const std::string object = bytes.substr(0, object_len);
  if (fnv1a(object, kBasis) != sum) return false;
  p.key = bytes.substr(object_len, key_len);
  p.summary = bytes.substr(object_len + key_len, summary_len);
  return true;
}

bool is_entry(const fs::path& p) { return p.extension() == ".so" && p.stem().string().size() == 32; }
bool is_temporary(const fs::path& p) { return p.filename().string().rfind(".tmp-", 0) == 0; }

}  // namespace

fs::path KernelCache::default_dir() {
  const auto env = [](const char* name) -> std::string {
    const char* v = std::getenv(name);
    return v ? v : "";
  };
  fs::path base;
  if (!env("TWOBODY_CACHE_DIR").empty()) base = env("TWOBODY_CACHE_DIR");
  else if (!env("XDG_CACHE_HOME").empty()) base = fs::path(env("XDG_CACHE_HOME")) / "twobody";
  else if (!env("HOME").empty()) base = fs::path(env("HOME")) / ".cache" / "twobody";
  else base = fs::temp_directory_path() / "twobody-cache";
  return base / "kernels" / "v1";
}

std::uintmax_t KernelCache::default_max_bytes() {
  if (const char* v = std::getenv("TWOBODY_CACHE_MAX_BYTES")) {
    char* end = nullptr;
    const unsigned long long n = std::strtoull(v, &end, 10);
    if (end == v || *end != 0) throw_config(fmt::format("TWOBODY_CACHE_MAX_BYTES={}: give a number of bytes", v));
    return n;
  }
  return std::uintmax_t(1) << 30;
}

KernelCache::KernelCache(fs::path dir) : dir_(std::move(dir)) {}

std::string KernelCache::file_name(const std::string& key) {
  return fmt::format("{:016x}{:016x}.so", fnv1a(key, kBasis), fnv1a(key, kBasis2));
}

std::optional<fs::path> KernelCache::find(const std::string& key) const {
  const fs::path p = dir_ / file_name(key);
  std::string bytes;
  std::error_code ec;
  if (!fs::exists(p, ec) || !read_file(p, bytes)) return std::nullopt;
  Parsed e;
  if (!parse_entry(bytes, e)) {
    fs::remove(p, ec);  // damaged (a disk fault, or not ours): rebuilt by the caller
    return std::nullopt;
  }
  if (e.key != key) return std::nullopt;  // another key of the same hash
  fs::last_write_time(p, fs::file_time_type::clock::now(), ec);  // least recently used: a read-only cache keeps its times
  return p;
}

std::optional<std::string> KernelCache::load(const std::string& key) const {
  const std::optional<fs::path> p = find(key);
  std::string bytes;
  if (!p || !read_file(*p, bytes)) return std::nullopt;
  Parsed e;
  if (!parse_entry(bytes, e) || e.key != key) return std::nullopt;  // replaced between the two reads
  const std::uint64_t object_len = get_u64(bytes.data() + bytes.size() - kTrailerBytes + 16);
  bytes.resize(object_len);
  return bytes;
}

fs::path KernelCache::store(const std::string& key, const std::string& summary, const std::string& object) const {
  std::error_code ec;
  fs::create_directories(dir_, ec);
  if (ec) throw Error(ErrorKind::Resource, fmt::format("the kernel cache {} cannot be created: {}", dir_.string(), ec.message()));
  std::string bytes = object;
  bytes += key;
  bytes += summary;
  put_u64(bytes, key.size());
  put_u64(bytes, summary.size());
  put_u64(bytes, object.size());
  put_u64(bytes, fnv1a(object, kBasis));
  bytes.append(kMagic, sizeof kMagic);
  static std::atomic<unsigned> serial{0};
  const fs::path final_path = dir_ / file_name(key);
  const fs::path tmp = dir_ / fmt::format(".tmp-{}-{}-{}", file_name(key), ::getpid(), serial++);
  const int fd = ::open(tmp.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
  if (fd < 0)
    throw Error(ErrorKind::Resource, fmt::format("the kernel cache {} is not writable: {}", dir_.string(), std::strerror(errno)));
  std::size_t done = 0;
  bool ok = true;
  while (done < bytes.size()) {
    const ssize_t w = ::write(fd, bytes.data() + done, bytes.size() - done);
    if (w < 0 && errno == EINTR) continue;
    if (w <= 0) {
      ok = false;
      break;
    }
    done += static_cast<std::size_t>(w);
  }
  const int saved = errno;
  ok = ok && ::fsync(fd) == 0;
  ok = (::close(fd) == 0) && ok;
  if (!ok || ::rename(tmp.c_str(), final_path.c_str()) != 0) {
    const int e = ok ? errno : saved;
    ::unlink(tmp.c_str());
    throw Error(ErrorKind::Resource, fmt::format("the kernel cache entry {} could not be written: {}", final_path.string(), std::strerror(e)));
  }
  return final_path;
}

std::vector<KernelCache::Entry> KernelCache::list() const {
  std::vector<Entry> out;
  std::error_code ec;
  for (const fs::directory_entry& d : fs::directory_iterator(dir_, ec)) {
    if (!is_entry(d.path())) continue;
    Entry e;
    e.path = d.path();
    e.bytes = d.file_size(ec);
    e.last_used = d.last_write_time(ec);
    std::string bytes;
    Parsed p;
    if (read_file(d.path(), bytes) && parse_entry(bytes, p)) e.summary = p.summary;
    out.push_back(std::move(e));
  }
  std::sort(out.begin(), out.end(), [](const Entry& x, const Entry& y) { return x.last_used > y.last_used; });
  return out;
}

std::size_t KernelCache::clear() const {
  std::size_t n = 0;
  std::error_code ec;
  for (const fs::directory_entry& d : fs::directory_iterator(dir_, ec)) {
    if (is_entry(d.path()) && fs::remove(d.path(), ec)) ++n;
    else if (is_temporary(d.path())) fs::remove(d.path(), ec);
  }
  return n;
}

std::size_t KernelCache::prune(std::uintmax_t max_bytes) const {
  std::error_code ec;
  if (!fs::is_directory(dir_, ec)) return 0;
  const fs::path lock_path = dir_ / ".prune";
  const int fd = ::open(lock_path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0644);
  if (fd < 0) return 0;  // a read-only cache is not pruned by its readers
  if (::flock(fd, LOCK_EX | LOCK_NB) != 0) {
    ::close(fd);
    return 0;
  }
  const auto now = fs::file_time_type::clock::now();
  for (const fs::directory_entry& d : fs::directory_iterator(dir_, ec))
    if (is_temporary(d.path()) && now - d.last_write_time(ec) > std::chrono::hours(1)) fs::remove(d.path(), ec);
  std::vector<Entry> entries = list();  // newest first
  std::uintmax_t total = 0;
  for (const Entry& e : entries) total += e.bytes;
  std::size_t removed = 0;
  while (total > max_bytes && !entries.empty()) {
    const Entry& oldest = entries.back();
    if (fs::remove(oldest.path, ec)) ++removed;
    total -= std::min(total, oldest.bytes);
    entries.pop_back();
  }
  ::flock(fd, LOCK_UN);
  ::close(fd);
  return removed;
}

}  // namespace twobody
