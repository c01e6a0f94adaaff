#include "server/lookup_cache.h"

#include <functional>

#include "tiletune/v1/tiletune.pb.h"

namespace tiletune::server {

CachedRecord::CachedRecord(std::shared_ptr<const v1::Record> r) : record(std::move(r)) {
  // A LookupResponse holding only the record encodes as just its field.
  v1::LookupResponse only_record;
  *only_record.mutable_record() = *record;
  only_record.SerializeToString(&response_field);
}

LookupCache::LookupCache(size_t max_entries)
    : max_per_shard_(std::max<size_t>(1, max_entries / kShards)) {}

size_t LookupCache::KeyHash::operator()(KeyView key) const {
  const size_t h = std::hash<std::string_view>{}(key.first);
  return h ^
         (std::hash<std::string_view>{}(key.second) + 0x9e3779b97f4a7c15ULL + (h << 6) + (h >> 2));
}

LookupCache::Shard& LookupCache::ShardFor(KeyView key) const {
  return shards_[KeyHash{}(key) % kShards];
}

std::optional<LookupCache::Entry> LookupCache::Find(std::string_view device_class,
                                                    std::string_view key) const {
  const KeyView full(device_class, key);
  Shard& shard = ShardFor(full);
  std::shared_lock lock(shard.mu);
  auto it = shard.entries.find(full);
  if (it == shard.entries.end()) return std::nullopt;
  return it->second;
}

void LookupCache::PutLocked(Shard& shard, const std::string& device_class, const std::string& key,
                            std::shared_ptr<const v1::Record> record) {
  Entry entry = record ? std::make_shared<const CachedRecord>(std::move(record)) : nullptr;
  auto it = shard.entries.find(KeyView(device_class, key));
  if (it != shard.entries.end()) {
    it->second = std::move(entry);
    return;
  }
  if (shard.entries.size() >= max_per_shard_) shard.entries.clear();
  shard.entries.emplace(FullKey(device_class, key), std::move(entry));
}

void LookupCache::Put(const std::string& device_class, const std::string& key,
                      std::shared_ptr<const v1::Record> record) {
  Shard& shard = ShardFor(KeyView(device_class, key));
  std::unique_lock lock(shard.mu);
  PutLocked(shard, device_class, key, std::move(record));
}

uint64_t LookupCache::Erasures(std::string_view device_class, std::string_view key) const {
  Shard& shard = ShardFor(KeyView(device_class, key));
  std::shared_lock lock(shard.mu);
  return shard.erasures;
}

void LookupCache::PutUnlessErased(const std::string& device_class, const std::string& key,
                                  std::shared_ptr<const v1::Record> record, uint64_t erasures) {
  Shard& shard = ShardFor(KeyView(device_class, key));
  std::unique_lock lock(shard.mu);
  if (shard.erasures == erasures) PutLocked(shard, device_class, key, std::move(record));
}

void LookupCache::Erase(std::string_view device_class, std::string_view key) {
  const KeyView full(device_class, key);
  Shard& shard = ShardFor(full);
  std::unique_lock lock(shard.mu);
  if (auto it = shard.entries.find(full); it != shard.entries.end()) shard.entries.erase(it);
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
