#pragma once
// The on-disk cache of generated kernels (compiled pair expressions): one file an entry, named by
// a 128-bit hash of its key, holding the object's bytes followed by a trailer with the full key,
// a summary for `twobody cache list`, the object's length and checksum. A lookup compares the
// whole key, so two keys with one hash are a miss, never a wrong kernel; a bad trailer, length or
// checksum deletes the entry. Writes go to a temporary file in the same folder, fsync, rename:
// atomic on POSIX, so processes compiling one key at once rename identical content and a reader
// never sees part of a file. Readers take no lock; pruning (least recently used first, the
// modification time touched on every use) runs under an advisory flock on `.prune`.
#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

namespace twobody {

class KernelCache {
 public:
  // $TWOBODY_CACHE_DIR, else $XDG_CACHE_HOME/twobody, else $HOME/.cache/twobody; then kernels/v1.
  static std::filesystem::path default_dir();
  // TWOBODY_CACHE_MAX_BYTES, else 1 GiB.
  static std::uintmax_t default_max_bytes();

  explicit KernelCache(std::filesystem::path dir);
  const std::filesystem::path& dir() const { return dir_; }

  // The file of `key`'s entry (touched) when present and whole; a damaged one is deleted.
  std::optional<std::filesystem::path> find(const std::string& key) const;
  // The object of `key`'s entry (touched) when present and whole; a damaged one is deleted.
  std::optional<std::string> load(const std::string& key) const;
  // Stores the object as `key`'s entry and returns its file; Error(Resource) when the folder
  // cannot be created or written.
  std::filesystem::path store(const std::string& key, const std::string& summary, const std::string& object) const;

  struct Entry {
    std::filesystem::path path;
    std::string summary;  // empty for a damaged entry
    std::uintmax_t bytes = 0;
    std::filesystem::file_time_type last_used;
  };
  std::vector<Entry> list() const;
  // Deletes every entry (and stale temporary files); returns how many entries went.
  std::size_t clear() const;
  // Deletes the least recently used entries until the folder holds at most max_bytes; temporary
  // files older than an hour (a process killed while writing) go too. Returns the entries deleted.
  // Skipped, returning 0, while another process prunes.
  std::size_t prune(std::uintmax_t max_bytes) const;

  // The entry's file name for a key: 32 hexadecimal digits of its hash, then ".so".
  static std::string file_name(const std::string& key);

 private:
  std::filesystem::path dir_;
};

}  // namespace twobody
