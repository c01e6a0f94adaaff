#pragma once

#include <chrono>
#include <string>
#include <thread>

#include "db/tuning_store.h"

namespace tiletune::db {

// Reports record changes announced on channel tiletune_records (a trigger
// on records sends them at commit) from a thread with a connection of its
// own. When the connection breaks it reconnects, and reports ("", "") on
// every (re)connection: what changed meanwhile is unknown.
class PostgresRecordListener final : public RecordWatch {
 public:
  PostgresRecordListener(std::string url, int connect_timeout_seconds, RecordChangeFn on_change);
  // Stops the thread (within kPollInterval).
  ~PostgresRecordListener() override;

 private:
  // How often the thread looks for a stop request while the channel is quiet.
  static constexpr std::chrono::milliseconds kPollInterval{200};
  // Between attempts to reach a server that is down.
  static constexpr std::chrono::seconds kReconnectDelay{1};

  void Listen(std::stop_token stop);

  const std::string url_;
  const int connect_timeout_seconds_;
  const RecordChangeFn on_change_;
  std::jthread thread_;  // last: started once the members above are set
};

}  // namespace tiletune::db
