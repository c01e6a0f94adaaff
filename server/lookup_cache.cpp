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

void LookupCache::PutLocked(Shard& shard, std::string full_key, Entry entry) {
  if (shard.entries.size() >= max_per_shard_ && !shard.entries.contains(full_key)) {
    shard.entries.clear();
  }
  shard.entries[std::move(full_key)] = std::move(entry);
}

void LookupCache::Put(const std::string& device_class, const std::string& key, Entry entry) {
  std::string full = FullKey(device_class, key);
  Shard& shard = ShardFor(full);
  std::unique_lock lock(shard.mu);
  PutLocked(shard, std::move(full), std::move(entry));
}

uint64_t LookupCache::Erasures(const std::string& device_class, const std::string& key) const {
  Shard& shard = ShardFor(FullKey(device_class, key));
  std::shared_lock lock(shard.mu);
  return shard.erasures;
}

void LookupCache::PutUnlessErased(const std::string& device_class, const std::string& key,
                                  Entry entry, uint64_t erasures) {
  std::string full = FullKey(device_class, key);
  Shard& shard = ShardFor(full);
  std::unique_lock lock(shard.mu);
  if (shard.erasures == erasures) PutLocked(shard, std::move(full), std::move(entry));
}

void LookupCache::Erase(const std::string& device_class, const std::string& key) {
  const std::string full = FullKey(device_class, key);
  Shard& shard = ShardFor(full);
  std::unique_lock lock(shard.mu);
  shard.entries.erase(full);
  ++shard.erasures;
}

void LookupCache::Clear() {
  for (auto& shard : shards_) {
    std::unique_lock lock(shard.mu);
    shard.entries.clear();
    ++shard.erasures;
  }
}

}  // namespace tiletune::server
