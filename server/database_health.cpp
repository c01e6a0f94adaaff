#include "server/database_health.h"

#include <spdlog/spdlog.h>

namespace tiletune::server {

DatabaseHealth::DatabaseHealth(ChangeFn on_change) : on_change_(std::move(on_change)) {}

void DatabaseHealth::Unreachable(const std::string& why) {
  std::lock_guard lock(mu_);
  why_ = why;
  if (!reachable_) return;
  reachable_ = false;
  spdlog::error(
      "tuning database unreachable: {}; lookups are answered from the cache, calls "
      "that need the database are refused until it is back",
      why);
  if (on_change_) on_change_(false);
}

void DatabaseHealth::Reachable() {
  std::lock_guard lock(mu_);
  if (reachable_) return;
  reachable_ = true;
  spdlog::info("tuning database reachable again");
  if (on_change_) on_change_(true);
}

void DatabaseHealth::Report() {
  std::lock_guard lock(mu_);
  if (on_change_) on_change_(reachable_);
}

bool DatabaseHealth::reachable() const {
  std::lock_guard lock(mu_);
  return reachable_;
}

std::string DatabaseHealth::why() const {
  std::lock_guard lock(mu_);
  return why_;
}

}  // namespace tiletune::server
