// The single writer: group commit with per-task savepoints, and readers
// that do not wait for it.
#include "db/sqlite_write_queue.h"

#include <future>
#include <thread>

#include "db/sqlite_read_pool.h"
#include "db/tuning_store.h"
#include "store_test.h"

namespace tiletune::db {
namespace {

class SqliteWriteQueue : public SqliteStoreTest {
 protected:
  void SetUp() override {
    SqliteStoreTest::SetUp();
    connection_ = std::make_unique<Connection>(path_, OpenMode::kReadWriteCreate, 5000);
    connection_->Exec("PRAGMA journal_mode = WAL; CREATE TABLE t (v INTEGER)");
  }

  int64_t Count(Connection& connection) {
    auto row = connection.Prepare("SELECT count(*) FROM t");
    row.Step();
    return row.Int64(0);
  }

  std::unique_ptr<Connection> connection_;
};

TEST_F(SqliteWriteQueue, AFailingTaskUndoesOnlyItsOwnChanges) {
  WriteQueue queue(*connection_);
  std::promise<void> release;
  // Holds the writer so the tasks below queue up and share one batch.
  auto blocker = std::async(std::launch::async,
                            [&] { queue.Run([&](Connection&) { release.get_future().wait(); }); });
  std::vector<std::future<int64_t>> results;
  for (int i = 0; i < 10; ++i) {
    results.push_back(std::async(std::launch::async, [&queue, i] {
      return queue.Run([i](Connection& connection) {
        connection.Prepare("INSERT INTO t (v) VALUES (?)").Bind(i).Run();
        if (i % 3 == 0) throw std::invalid_argument("task " + std::to_string(i));
        return connection.LastInsertRowId();
      });
    }));
  }
  std::this_thread::sleep_for(std::chrono::milliseconds(100));
  release.set_value();
  blocker.get();
  for (int i = 0; i < 10; ++i) {
    if (i % 3 == 0) {
      EXPECT_THROW(results[i].get(), std::invalid_argument);
    } else {
      EXPECT_GT(results[i].get(), 0);
    }
  }
  EXPECT_EQ(Count(*connection_), 6);
  auto failed = connection_->Prepare("SELECT count(*) FROM t WHERE v % 3 = 0");
  failed.Step();
  EXPECT_EQ(failed.Int64(0), 0);
}

TEST_F(SqliteWriteQueue, ReadersSeeTheLastCommitWhileAWriteIsOpen) {
  ReadPool readers(path_, 1, 5000);
  WriteQueue queue(*connection_);
  queue.Run([](Connection& connection) { connection.Exec("INSERT INTO t (v) VALUES (1)"); });
  int64_t seen_during_write = -1;
  queue.Run([&](Connection& connection) {
    connection.Exec("INSERT INTO t (v) VALUES (2)");
    // The write transaction is open here; a reader must neither wait for it
    // nor see it.
    std::thread reader([&] {
      auto lease = readers.Acquire();
      seen_during_write = Count(*lease);
    });
    reader.join();
  });
  EXPECT_EQ(seen_during_write, 1);
  EXPECT_EQ(Count(*readers.Acquire()), 2);
}

}  // namespace
}  // namespace tiletune::db
