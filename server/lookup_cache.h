#pragma once

#include <array>
#include <memory>
#include <mutex>
#include <optional>
#include <shared_mutex>
#include <string>
#include <unordered_map>

#include "tiletune/v1/records.pb.h"

namespace tiletune::server {

// In-memory answers in front of the database for Lookup: the record for a
// (device class, canonical key), or the fact that there is none. The daemon
// is the only writer of its SQLite file, so a write through Put keeps the
// cache exact. Bounded: a full shard drops its entries (cheap, and the next
// lookups refill it from the database).
class LookupCache {
 public:
  using Entry = std::shared_ptr<const v1::Record>;  // null: known to have no record

  explicit LookupCache(size_t max_entries);

  // nullopt when the cache does not know.
  std::optional<Entry> Find(const std::string& device_class, const std::string& key) const;
  void Put(const std::string& device_class, const std::string& key, Entry entry);
  void Clear();

 private:
  static constexpr size_t kShards = 16;
  struct Shard {
    mutable std::shared_mutex mu;
    std::unordered_map<std::string, Entry> entries;
  };
  Shard& ShardFor(const std::string& full_key) const;
  static std::string FullKey(const std::string& device_class, const std::string& key);

  size_t max_per_shard_;
  mutable std::array<Shard, kShards> shards_;
};

}  // namespace tiletune::server
