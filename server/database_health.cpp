#include "server/database_health.h"

#include <spdlog/spdlog.h>

namespace tiletune::server {

DatabaseHealth::DatabaseHealth(ChangeFn on_change) : on_change_(std::move(on_change)) {}

void DatabaseHealth::Changed() {
  if (on_change_) on_change_(reachable_ && writable_);
}

void DatabaseHealth::Turn(bool& flag, bool now, spdlog::level::level_enum level,
                          std::string_view message) {
  if (flag == now) return;
  flag = now;
  spdlog::log(level, "{}", message);
  Changed();
}

void DatabaseHealth::Unreachable(const std::string& why) {
  std::lock_guard lock(mu_);
  why_ = why;
  Turn(reachable_, false, spdlog::level::err,
       fmt::format("tuning database unreachable: {}; lookups are answered from the cache, calls "
                   "that need the database are refused until it is back",
                   why));
}

void DatabaseHealth::Reachable() {
  std::lock_guard lock(mu_);
  Turn(reachable_, true, spdlog::level::info, "tuning database reachable again");
}

void DatabaseHealth::Unwritable(const std::string& why) {
  std::lock_guard lock(mu_);
  Turn(writable_, false, spdlog::level::err,
       fmt::format("tuning database refuses writes: {}; lookups go on, job items and jobs whose "
                   "state could not be stored are stored once a write lands again",
                   why));
}

void DatabaseHealth::Written() {
  std::lock_guard lock(mu_);
  Turn(writable_, true, spdlog::level::info, "tuning database takes writes again");
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
