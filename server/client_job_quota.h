#pragma once

#include <functional>
#include <map>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

namespace tiletune::server {

// Caps the jobs one client has queued or running, so that one caller cannot
// take the whole queue (max_queued_jobs) from everyone else. Counts the jobs
// submitted since this daemon started; a job stops counting once it ends.
class ClientJobQuota {
 public:
  // `is_active(job_id)`: whether the job is still queued or running.
  ClientJobQuota(int max_per_client, std::function<bool(const std::string&)> is_active);

  // Runs `create` (which returns the new job's id) unless `client` already
  // has max_per_client active jobs; then returns that count instead. Submits
  // are serialised so that two at once cannot both take the last place.
  std::optional<int> CreateWithin(const std::string& client,
                                  const std::function<std::string()>& create);

  int max_per_client() const { return max_per_client_; }

 private:
  int max_per_client_;
  std::function<bool(const std::string&)> is_active_;
  std::mutex mu_;
  std::map<std::string, std::vector<std::string>> jobs_;
};

}  // namespace tiletune::server
