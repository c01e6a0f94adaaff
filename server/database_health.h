#pragma once

#include <functional>
#include <mutex>
#include <string>

#include "db/tuning_store.h"

namespace tiletune::server {

// Whether the tuning database answers, as this daemon's calls to it find
// it: a call that cannot reach it (db::StoreUnreachable) marks it down, one
// that reaches it marks it up again. Each change is logged once and handed
// to on_change (health status, metrics), so an outage is two log lines,
// not one per call. While it is down the daemon answers lookups from its
// cache and refuses what needs the database at once.
class DatabaseHealth {
 public:
  using ChangeFn = std::function<void(bool reachable)>;

  // on_change runs under this object's lock: it must not call back.
  explicit DatabaseHealth(ChangeFn on_change = {});

  void Unreachable(const std::string& why);
  void Reachable();
  // Hands the current state to on_change again, under the same lock as the
  // changes, so that what on_change also reads (whether the daemon serves
  // at all) is applied in order with them.
  void Report();
  bool reachable() const;

  // Runs `call`, which uses the database, unless the database is known to
  // be unreachable; a call that finds it so (db::StoreUnreachable) marks it.
  // True when `call` ran to its end. Other store errors propagate.
  template <typename Call>
  bool Attempt(Call&& call) {
    if (!reachable()) return false;
    try {
      call();
      return true;
    } catch (const db::StoreUnreachable& e) {
      Unreachable(e.what());
      return false;
    }
  }
  // Why it was last found unreachable.
  std::string why() const;

 private:
  const ChangeFn on_change_;
  mutable std::mutex mu_;
  bool reachable_ = true;
  std::string why_;
};

}  // namespace tiletune::server
