#include "server/client_job_quota.h"

#include <algorithm>

namespace tiletune::server {

ClientJobQuota::ClientJobQuota(int max_per_client,
                               std::function<bool(const std::string&)> is_active)
    : max_per_client_(max_per_client), is_active_(std::move(is_active)) {}

std::optional<int> ClientJobQuota::CreateWithin(const std::string& client,
                                                const std::function<std::string()>& create) {
  std::lock_guard lock(mu_);
  auto& jobs = jobs_[client];
  std::erase_if(jobs, [this](const std::string& id) { return !is_active_(id); });
  if (static_cast<int>(jobs.size()) >= max_per_client_) return static_cast<int>(jobs.size());
  jobs.push_back(create());
  return std::nullopt;
}

}  // namespace tiletune::server
