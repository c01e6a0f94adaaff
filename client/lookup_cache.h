#pragma once

#include <chrono>
#include <cstddef>
#include <functional>
#include <list>
#include <mutex>
#include <optional>
#include <string>
#include <unordered_map>

#include "tiletune/v1/tiletune.pb.h"

namespace tiletune::client {

// A bounded least-recently-used map from a serialized LookupRequest to the
// daemon's answer, each entry with its own expiry. Thread-safe: an inference
// server looks up from many threads through one client.
class LookupCache {
 public:
  using Clock = std::function<std::chrono::steady_clock::time_point()>;

  // `capacity` 0 keeps nothing. `clock` is injectable so expiry can be tested
  // without sleeping.
  explicit LookupCache(size_t capacity, Clock clock = std::chrono::steady_clock::now);

  // The answer stored for `key` if it has not expired; a hit makes the entry
  // the most recently used.
  std::optional<v1::LookupResponse> Get(const std::string& key);

  // Stores `response` for `ttl`, evicting the least recently used entry when
  // full.
  void Put(const std::string& key, v1::LookupResponse response,
           std::chrono::steady_clock::duration ttl);

  size_t size() const;

 private:
  struct Entry {
    std::string key;
    v1::LookupResponse response;
    std::chrono::steady_clock::time_point expires_at;
  };

  size_t capacity_;
  Clock clock_;
  mutable std::mutex mutex_;
  std::list<Entry> entries_;  // most recently used first
  std::unordered_map<std::string, std::list<Entry>::iterator> index_;
};

}  // namespace tiletune::client
