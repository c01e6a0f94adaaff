#pragma once

#include <array>
#include <cstdint>
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
// cache exact; on a shared PostgreSQL database, the store's record change
// feed Erases what other daemons wrote. Bounded: a full shard drops its
// entries (cheap, and the next lookups refill it from the database).
class LookupCache {
 public:
  using Entry = std::shared_ptr<const v1::Record>;  // null: known to have no record

  explicit LookupCache(size_t max_entries);

  // nullopt when the cache does not know.
  std::optional<Entry> Find(const std::string& device_class, const std::string& key) const;
  void Put(const std::string& device_class, const std::string& key, Entry entry);
  // Filling a miss from the database races with Erase: the read may predate
  // the write an Erase announces. Take Erasures before the read and fill
  // with PutUnlessErased, which drops the entry if an Erase came between.
  uint64_t Erasures(const std::string& device_class, const std::string& key) const;
  void PutUnlessErased(const std::string& device_class, const std::string& key, Entry entry,
                       uint64_t erasures);
  void Erase(const std::string& device_class, const std::string& key);
  void Clear();

 private:
  static constexpr size_t kShards = 16;
  struct Shard {
    mutable std::shared_mutex mu;
    std::unordered_map<std::string, Entry> entries;
    uint64_t erasures = 0;  // Erase and Clear calls that reached this shard
  };
  void PutLocked(Shard& shard, std::string full_key, Entry entry);
  Shard& ShardFor(const std::string& full_key) const;
  static std::string FullKey(const std::string& device_class, const std::string& key);

  size_t max_per_shard_;
  mutable std::array<Shard, kShards> shards_;
};

}  // namespace tiletune::server
