// Record changes announced over LISTEN/NOTIFY: every watcher hears of a
// record another store (daemon) commits, within a second, and of nothing
// that was rolled back.
#include <chrono>
#include <condition_variable>
#include <mutex>

#include "db/tuning_store.h"
#include "store_test.h"

namespace tiletune::db {
namespace {

using namespace std::chrono_literals;

// What a watcher heard, as "class/key" lines.
class Heard {
 public:
  RecordChangeFn Callback() {
    return [this](const std::string& device_class, const std::string& key) {
      std::lock_guard lock(mutex_);
      changes_.push_back(device_class + "/" + key);
      arrived_.notify_all();
    };
  }
  // Waits up to a second for `count` changes in all; returns them.
  std::vector<std::string> Await(std::size_t count) {
    std::unique_lock lock(mutex_);
    arrived_.wait_for(lock, 1s, [&] { return changes_.size() >= count; });
    return changes_;
  }

 private:
  std::mutex mutex_;
  std::condition_variable arrived_;
  std::vector<std::string> changes_;
};

v1::Record Record(const std::string& device_class) {
  v1::Record record;
  record.mutable_key()->set_op("gemm");
  record.set_device_class(device_class);
  return record;
}

using PostgresRecordChanges = PostgresStoreTest;

TEST_F(PostgresRecordChanges, EveryWatcherHearsOfCommittedRecordsWithinASecond) {
  auto writer = Open();
  auto reader = Open();
  Heard heard;
  auto watch = reader->WatchRecordChanges(heard.Callback());
  ASSERT_TRUE(watch);
  // First: anything may have changed before the watch began.
  ASSERT_EQ(heard.Await(1), std::vector<std::string>{"/"});

  writer->PutRecord("gemm:1", Record("cls-a"));
  ASSERT_TRUE(writer
                  ->ImportRecords({{1, "gemm:2", Record("cls-b")}, {2, "gemm:3", Record("cls-a")}},
                                  false, false)
                  .empty());
  // A dry run and a rejected import write nothing, so announce nothing.
  writer->ImportRecords({{1, "gemm:4", Record("cls-a")}}, false, true);
  writer->ImportRecords({{1, "gemm:5", Record("cls-a")}, {2, "gemm:1", Record("cls-a")}}, false,
                        false);
  // A key too long for a notification announces its whole class.
  writer->PutRecord(std::string(9000, 'k'), Record("cls-c"));
  writer->PutRecord("gemm:6", Record("cls-a"));
  EXPECT_EQ(heard.Await(6), (std::vector<std::string>{"/", "cls-a/gemm:1", "cls-b/gemm:2",
                                                      "cls-a/gemm:3", "cls-c/", "cls-a/gemm:6"}));
}

TEST_F(PostgresRecordChanges, AWatcherWhoseConnectionDiesReconnectsAndSaysSo) {
  auto store = Open();
  Heard heard;
  auto watch = store->WatchRecordChanges(heard.Callback());
  ASSERT_EQ(heard.Await(1).size(), 1u);
  Query(
      "SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE query LIKE 'LISTEN%'"
      " AND pid <> pg_backend_pid()");
  // Reconnecting takes up to a second (kReconnectDelay) after the failure.
  std::vector<std::string> changes;
  for (int wait = 0; wait < 3 && changes.size() < 2; ++wait) changes = heard.Await(2);
  ASSERT_EQ(changes, (std::vector<std::string>{"/", "/"}));
  store->PutRecord("gemm:1", Record("cls-a"));
  EXPECT_EQ(heard.Await(3).back(), "cls-a/gemm:1");
}

}  // namespace
}  // namespace tiletune::db
