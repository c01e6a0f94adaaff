#include "server/client_job_quota.h"

namespace tiletune::server {

ClientJobQuota::ClientJobQuota(int max_per_client,
                               std::function<int64_t(const std::string&)> count_active)
    : max_per_client_(max_per_client), count_active_(std::move(count_active)) {}

std::optional<int64_t> ClientJobQuota::CreateWithin(const std::string& client,
                                                    const std::function<void()>& create) {
  std::lock_guard lock(mu_);
  const int64_t active = count_active_(client);
  if (active >= max_per_client_) return active;
  create();
  return std::nullopt;
}

}  // namespace tiletune::server
