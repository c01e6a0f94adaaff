#include "client/lookup_cache.h"

namespace tiletune::client {

LookupCache::LookupCache(size_t capacity, Clock clock)
    : capacity_(capacity), clock_(std::move(clock)) {}

std::optional<v1::LookupResponse> LookupCache::Get(const std::string& key) {
  std::lock_guard lock(mutex_);
  auto found = index_.find(key);
  if (found == index_.end()) return std::nullopt;
  auto entry = found->second;
  if (clock_() >= entry->expires_at) {
    index_.erase(found);
    entries_.erase(entry);
    return std::nullopt;
  }
  entries_.splice(entries_.begin(), entries_, entry);
  return entry->response;
}

void LookupCache::Put(const std::string& key, v1::LookupResponse response,
                      std::chrono::steady_clock::duration ttl) {
  if (capacity_ == 0) return;
  std::lock_guard lock(mutex_);
  auto expires_at = clock_() + ttl;
  if (auto found = index_.find(key); found != index_.end()) {
    found->second->response = std::move(response);
    found->second->expires_at = expires_at;
    entries_.splice(entries_.begin(), entries_, found->second);
    return;
  }
  if (entries_.size() == capacity_) {
    index_.erase(entries_.back().key);
    entries_.pop_back();
  }
  entries_.push_front(Entry{key, std::move(response), expires_at});
  index_.emplace(key, entries_.begin());
}

size_t LookupCache::size() const {
  std::lock_guard lock(mutex_);
  return entries_.size();
}

}  // namespace tiletune::client
