#include "server/lookup_cache.h"

#include <functional>

namespace tiletune::server {

LookupCache::LookupCache(size_t max_entries)
    : max_per_shard_(std::max<size_t>(1, max_entries / kShards)) {}

std::string LookupCache::FullKey(const std::string& device_class, const std::string& key) {
  return device_class + '\n' + key;
}

LookupCache::Shard& LookupCache::ShardFor(const std::string& full_key) const {
  return shards_[std::hash<std::string>{}(full_key) % kShards];
}

std::optional<LookupCache::Entry> LookupCache::Find(const std::string& device_class,
                                                    const std::string& key) const {
  const std::string full = FullKey(device_class, key);
  Shard& shard = ShardFor(full);
  std::shared_lock lock(shard.mu);
  auto it = shard.entries.find(full);
  if (it == shard.entries.end()) return std::nullopt;
  return it->second;
}

void LookupCache::Put(const std::string& device_class, const std::string& key, Entry entry) {
  std::string full = FullKey(device_class, key);
  Shard& shard = ShardFor(full);
  std::unique_lock lock(shard.mu);
  if (shard.entries.size() >= max_per_shard_ && !shard.entries.contains(full)) {
    shard.entries.clear();
  }
  shard.entries[std::move(full)] = std::move(entry);
}

void LookupCache::Clear() {
  for (auto& shard : shards_) {
    std::unique_lock lock(shard.mu);
    shard.entries.clear();
  }
}

}  // namespace tiletune::server
