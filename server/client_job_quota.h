#pragma once

#include <cstdint>
#include <functional>
#include <mutex>
#include <optional>
#include <string>

namespace tiletune::server {

// Caps the jobs one client has queued or running, so that one caller cannot
// take the whole queue (max_queued_jobs) from everyone else. The count comes
// from the job store (each job keeps who submitted it), so the cap holds
// across daemon restarts.
class ClientJobQuota {
 public:
  // `count_active(client)`: the client's jobs still queued or running.
  ClientJobQuota(int max_per_client, std::function<int64_t(const std::string&)> count_active);

  // Runs `create` (which stores a job submitted by `client`) unless `client`
  // already has max_per_client active jobs; then returns that count instead.
  // Submits are serialised so that two at once cannot both take the last
  // place.
  std::optional<int64_t> CreateWithin(const std::string& client,
                                      const std::function<void()>& create);

  int max_per_client() const { return max_per_client_; }

 private:
  int max_per_client_;
  std::function<int64_t(const std::string&)> count_active_;
  std::mutex mu_;
};

}  // namespace tiletune::server
