#pragma once

#include <array>
#include <cstdint>
#include <memory>
#include <mutex>
#include <optional>
#include <shared_mutex>
#include <string>
#include <string_view>
#include <unordered_map>
#include <utility>

#include "tiletune/v1/records.pb.h"

namespace tiletune::server {

// A record as Lookup answers with it: the message, and its encoding as the
// `record` field of a LookupResponse, made once when cached, so that a HIT
// appends those bytes to its reply instead of copying the message.
struct CachedRecord {
  explicit CachedRecord(std::shared_ptr<const v1::Record> r);
  std::shared_ptr<const v1::Record> record;
  std::string response_field;
};

// In-memory answers in front of the database for Lookup: the record for a
// (device class, canonical key), or the fact that there is none. The daemon
// is the only writer of its SQLite file, so a write through Put keeps the
// cache exact; on a shared PostgreSQL database, the store's record change
// feed Erases what other daemons wrote. Bounded: a full shard drops its
// entries (cheap, and the next lookups refill it from the database).
class LookupCache {
 public:
  using Entry = std::shared_ptr<const CachedRecord>;  // null: known to have no record

  explicit LookupCache(size_t max_entries);

  // nullopt when the cache does not know. Builds no string.
  std::optional<Entry> Find(std::string_view device_class, std::string_view key) const;
  // `record` null: known to have no record.
  void Put(const std::string& device_class, const std::string& key,
           std::shared_ptr<const v1::Record> record);
  // Filling a miss from the database races with Erase: the read may predate
  // the write an Erase announces. Take Erasures before the read and fill
  // with PutUnlessErased, which drops the entry if an Erase came between.
  uint64_t Erasures(std::string_view device_class, std::string_view key) const;
  void PutUnlessErased(const std::string& device_class, const std::string& key,
                       std::shared_ptr<const v1::Record> record, uint64_t erasures);
  void Erase(std::string_view device_class, std::string_view key);
  void Clear();

 private:
  static constexpr size_t kShards = 16;
  using FullKey = std::pair<std::string, std::string>;  // device class, canonical key
  using KeyView = std::pair<std::string_view, std::string_view>;
  // Looked up by a pair of views, so that a lookup copies neither string.
  struct KeyHash {
    using is_transparent = void;
    size_t operator()(KeyView key) const;
    size_t operator()(const FullKey& key) const { return (*this)(KeyView(key.first, key.second)); }
  };
  struct KeyEqual {
    using is_transparent = void;
    template <typename A, typename B>
    bool operator()(const A& a, const B& b) const {
      return std::string_view(a.first) == std::string_view(b.first) &&
             std::string_view(a.second) == std::string_view(b.second);
    }
  };
  struct Shard {
    mutable std::shared_mutex mu;
    std::unordered_map<FullKey, Entry, KeyHash, KeyEqual> entries;
    uint64_t erasures = 0;  // Erase and Clear calls that reached this shard
  };
  void PutLocked(Shard& shard, const std::string& device_class, const std::string& key,
                 std::shared_ptr<const v1::Record> record);
  Shard& ShardFor(KeyView key) const;

  size_t max_per_shard_;
  mutable std::array<Shard, kShards> shards_;
};

}  // namespace tiletune::server
