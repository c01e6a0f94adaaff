#include "server/miss_counter.h"

namespace tiletune::server {

MissCounter::MissCounter(int max_keys) : max_keys_(static_cast<size_t>(max_keys)) {}

MissCounter::Entry* MissCounter::Find(const std::string& device_id,
                                      const std::string& canonical_key) {
  const std::string key = device_id + '\n' + canonical_key;
  if (auto it = entries_.find(key); it != entries_.end()) return &it->second;
  if (entries_.size() >= max_keys_) return nullptr;
  return &entries_[key];
}

int64_t MissCounter::Count(const std::string& device_id, const std::string& canonical_key) {
  std::lock_guard lock(mu_);
  Entry* entry = Find(device_id, canonical_key);
  if (!entry) return 1;
  ++entry->misses;
  entry->changed = !entry->job_id.empty();
  return entry->misses;
}

void MissCounter::SetJob(const std::string& device_id, const std::string& canonical_key,
                         const std::string& job_id) {
  std::lock_guard lock(mu_);
  Entry* entry = Find(device_id, canonical_key);
  if (!entry || entry->job_id == job_id) return;
  entry->job_id = job_id;
  entry->changed = true;
}

std::map<std::string, int64_t> MissCounter::TakeChangedJobCounts() {
  std::lock_guard lock(mu_);
  std::map<std::string, int64_t> counts;
  for (auto& [key, entry] : entries_) {
    if (!entry.changed) continue;
    counts[entry.job_id] = entry.misses;
    entry.changed = false;
  }
  return counts;
}

bool MissCounter::FirstRetuneOf(const std::string& device_id, const std::string& canonical_key,
                                int64_t measured_at_seconds) {
  std::lock_guard lock(mu_);
  Entry* entry = Find(device_id, canonical_key);
  if (!entry) return false;
  if (entry->retuned_record == measured_at_seconds) return false;
  entry->retuned_record = measured_at_seconds;
  return true;
}

}  // namespace tiletune::server
