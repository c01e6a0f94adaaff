#include "db/postgres_record_listener.h"

#include <poll.h>

#include <condition_variable>
#include <mutex>
#include <utility>

#include "db/postgres_connection.h"

namespace tiletune::db {

PostgresRecordListener::PostgresRecordListener(std::string url, int connect_timeout_seconds,
                                               RecordChangeFn on_change)
    : url_(std::move(url)),
      connect_timeout_seconds_(connect_timeout_seconds),
      on_change_(std::move(on_change)),
      thread_([this](std::stop_token stop) { Listen(stop); }) {}

PostgresRecordListener::~PostgresRecordListener() {
  thread_.request_stop();
}

void PostgresRecordListener::Listen(std::stop_token stop) {
  std::mutex mu;
  std::condition_variable_any wake;
  while (!stop.stop_requested()) {
    try {
      PgConnection connection(url_, connect_timeout_seconds_);
      connection.ExecScript("LISTEN tiletune_records");
      on_change_("", "");
      while (!stop.stop_requested()) {
        pollfd socket{connection.Socket(), POLLIN, 0};
        poll(&socket, 1, static_cast<int>(kPollInterval.count()));
        for (const auto& payload : connection.TakeNotifications()) {
          auto newline = payload.find('\n');
          if (newline == std::string::npos) continue;
          on_change_(payload.substr(0, newline), payload.substr(newline + 1));
        }
      }
    } catch (const StoreError&) {
      // The server is unreachable or went away; try again shortly.
      std::unique_lock lock(mu);
      wake.wait_for(lock, stop, kReconnectDelay, [] { return false; });
    }
  }
}

}  // namespace tiletune::db
