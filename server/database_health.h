#pragma once

#include <functional>
#include <mutex>
#include <string>
#include <string_view>

#include <spdlog/common.h>

#include "db/tuning_store.h"

namespace tiletune::server {

// Whether the tuning database answers and takes writes, as this daemon's
// calls to it find it. A call that cannot reach it (db::StoreUnreachable)
// marks it down, one that reaches it marks it up again. A write it refuses
// (db::StoreUnwritable: a full disk, an I/O error, read-only) marks it
// unwritable until a later write lands (Written, fed by
// TuningStore::ReportWrites). Each change is logged once and handed to
// on_change (health status, metrics), so an outage is two log lines, not
// one per call. While it is down the daemon answers lookups from its cache
// and refuses what needs the database at once; while it is unwritable,
// reads go on and writes fail with the database's error.
class DatabaseHealth {
 public:
  // `usable`: reachable and writable, what calls that change the database
  // need.
  using ChangeFn = std::function<void(bool usable)>;

  // on_change runs under this object's lock: it must not call back.
  explicit DatabaseHealth(ChangeFn on_change = {});

  void Unreachable(const std::string& why);
  void Reachable();
  // A write was refused.
  void Unwritable(const std::string& why);
  // A write landed.
  void Written();
  // What TuningStore::ReportWrites hands out, as Unwritable or Written.
  void WriteOutcome(const db::StoreUnwritable* refused);
  // Hands the current state to on_change again, under the same lock as the
  // changes, so that what on_change also reads (whether the daemon serves
  // at all) is applied in order with them.
  void Report();
  bool reachable() const;
  bool writable() const;

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
  void Changed();  // under mu_
  // Under mu_: sets `flag` to `now`; a change is logged once and reported.
  void Turn(bool& flag, bool now, spdlog::level::level_enum level, std::string_view message);

  const ChangeFn on_change_;
  mutable std::mutex mu_;
  bool reachable_ = true;
  bool writable_ = true;
  std::string why_;
};

}  // namespace tiletune::server
