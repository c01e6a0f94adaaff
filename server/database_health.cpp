#include "server/database_health.h"

#include <spdlog/spdlog.h>

namespace tiletune::server {

DatabaseHealth::DatabaseHealth(ChangeFn on_change) : on_change_(std::move(on_change)) {}

void DatabaseHealth::Changed() {
  if (on_change_) on_change_(reachable_ && writable_);
}

void DatabaseHealth::Unreachable(const std::string& why) {
  std::lock_guard lock(mu_);
  why_ = why;
  if (!reachable_) return;
  reachable_ = false;
  spdlog::error(
      "tuning database unreachable: {}; lookups are answered from the cache, calls "
      "that need the database are refused until it is back",
      why);
  Changed();
}

void DatabaseHealth::Reachable() {
  std::lock_guard lock(mu_);
  if (reachable_) return;
  reachable_ = true;
  spdlog::info("tuning database reachable again");
  Changed();
}

void DatabaseHealth::Unwritable(const std::string& why) {
  std::lock_guard lock(mu_);
  if (!writable_) return;
  writable_ = false;
  spdlog::error(
      "tuning database refuses writes: {}; lookups go on, job items and jobs whose state "
      "could not be stored are stored once a write lands again",
      why);
  Changed();
}

void DatabaseHealth::Written() {
  std::lock_guard lock(mu_);
  if (writable_) return;
  writable_ = true;
  spdlog::info("tuning database takes writes again");
  Changed();
}

void DatabaseHealth::WriteOutcome(const db::StoreUnwritable* refused) {
  if (refused) {
    Unwritable(refused->what());
  } else {
    Written();
  }
}

void DatabaseHealth::Report() {
  std::lock_guard lock(mu_);
  Changed();
}

bool DatabaseHealth::reachable() const {
  std::lock_guard lock(mu_);
  return reachable_;
}

bool DatabaseHealth::writable() const {
  std::lock_guard lock(mu_);
  return writable_;
}

std::string DatabaseHealth::why() const {
  std::lock_guard lock(mu_);
  return why_;
}

}  // namespace tiletune::server
