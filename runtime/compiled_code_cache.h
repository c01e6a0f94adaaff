#pragma once

#include <cstdint>
#include <filesystem>
#include <map>
#include <mutex>
#include <optional>
#include <string>

namespace tiletune::runtime {

// Compiled artifacts on disk, one file per cache key (<dir>/<key><suffix>),
// bounded in size with least-recently-used eviction. Files arrive by an
// atomic rename, so daemons sharing the folder never see a partial artifact;
// a use touches the file's mtime, which is the LRU clock every daemon reads.
// The in-memory index is refreshed from the folder on a miss, so artifacts
// another daemon added are found too. Thread-safe.
class CompiledCodeCache {
 public:
  // Opens `dir` (creating it), indexes the artifacts already in it and
  // removes the work folders of processes that are gone.
  // Throws std::filesystem::filesystem_error when the folder is unusable.
  CompiledCodeCache(std::filesystem::path dir, int64_t max_bytes, std::string suffix = ".so");

  // The artifact stored under `key`, marked as just used; nullopt on a miss.
  std::optional<std::filesystem::path> Find(const std::string& key);

  // Moves `built` (a file in this cache's file system, e.g. under
  // MakeWorkDir) into the cache under `key`, then evicts the least recently
  // used other artifacts while the cache exceeds its bound. Returns the
  // artifact's path. A concurrent Insert of the same key is harmless: the
  // rename replaces one complete file with an identical complete file.
  std::filesystem::path Insert(const std::string& key, const std::filesystem::path& built);

  // A new, empty folder (under <dir>/tmp) for building one artifact; the
  // caller removes it.
  std::filesystem::path MakeWorkDir(const std::string& key);

  int64_t size_bytes() const;
  const std::filesystem::path& dir() const { return dir_; }

 private:
  std::filesystem::path PathOf(const std::string& key) const { return dir_ / (key + suffix_); }
  void EvictLocked(const std::string& keep);

  const std::filesystem::path dir_;
  const int64_t max_bytes_;
  const std::string suffix_;
  mutable std::mutex mu_;
  std::map<std::string, int64_t> index_;  // key -> bytes
  int64_t total_bytes_ = 0;
  uint64_t work_dirs_ = 0;
};

}  // namespace tiletune::runtime
