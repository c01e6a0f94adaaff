#pragma once

#include <cstdint>
#include <map>
#include <mutex>
#include <optional>
#include <string>
#include <unordered_map>

namespace tiletune::server {

// Lookup misses per (device, canonical key), counted in memory on the lookup
// path; the counts of keys that have a queued job are handed to the store
// (jobs.miss_count) by the scheduler before it claims work, so the queue is
// ordered by priority, then misses. Also remembers which stale records have
// already had their one re-tune queued. Bounded: past `max_keys` keys, new
// keys are not counted (their lookups still answer).
class MissCounter {
 public:
  explicit MissCounter(int max_keys);

  // Counts one miss; returns the key's count so far (1 for an uncounted key).
  int64_t Count(const std::string& device_id, const std::string& canonical_key);
  // The job that tunes the key, whose miss count the store should follow.
  void SetJob(const std::string& device_id, const std::string& canonical_key,
              const std::string& job_id);
  // job id -> miss count, for jobs whose count changed since the last call.
  std::map<std::string, int64_t> TakeChangedJobCounts();

  // True the first time it is asked for a record (device, key, measured at):
  // a stale record queues one re-tune, not one per lookup.
  bool FirstRetuneOf(const std::string& device_id, const std::string& canonical_key,
                     int64_t measured_at_seconds);

 private:
  struct Entry {
    int64_t misses = 0;
    std::string job_id;
    bool changed = false;
    std::optional<int64_t> retuned_record;  // measured_at of the record re-tuned
  };
  Entry* Find(const std::string& device_id, const std::string& canonical_key);

  const size_t max_keys_;
  std::mutex mu_;
  std::unordered_map<std::string, Entry> entries_;
};

}  // namespace tiletune::server
