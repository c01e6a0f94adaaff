#pragma once

#include <condition_variable>
#include <deque>
#include <exception>
#include <functional>
#include <mutex>
#include <optional>
#include <thread>
#include <type_traits>
#include <utility>
#include <vector>

#include "db/sqlite_connection.h"
#include "db/tuning_store.h"

namespace tiletune::db {

// The one thread that writes to the database. Callers hand it a function
// that runs on the writer connection inside a BEGIN IMMEDIATE transaction
// and block until that transaction has committed (with synchronous=FULL, a
// write is on disk when Run returns). Tasks queued while a commit is under
// way share the next transaction (group commit), each under its own
// savepoint so that one failing task undoes only its own changes; the error
// it threw is rethrown to its caller. An error that ends the whole
// transaction (a failed commit, an I/O error, a full disk) fails every task
// of the batch. Tasks must not BEGIN or COMMIT themselves. Each batch that
// changed rows, or that the database refused (StoreUnwritable), is told to
// `on_write`.
class WriteQueue {
 public:
  // `connection` must outlive the queue.
  explicit WriteQueue(Connection& connection, WriteOutcomeFn on_write = {});
  WriteQueue(const WriteQueue&) = delete;
  WriteQueue& operator=(const WriteQueue&) = delete;
  // Runs every task already queued, then stops the thread.
  ~WriteQueue();

  template <typename Fn>
  std::invoke_result_t<Fn&, Connection&> Run(Fn&& fn) {
    using Result = std::invoke_result_t<Fn&, Connection&>;
    if constexpr (std::is_void_v<Result>) {
      Submit([&fn](Connection& connection) { fn(connection); });
    } else {
      // The caller waits for the task, so its stack outlives the write.
      std::optional<Result> result;
      Submit([&fn, &result](Connection& connection) { result.emplace(fn(connection)); });
      return std::move(*result);
    }
  }

 private:
  struct Task {
    std::function<void(Connection&)> body;
    std::exception_ptr error;
    bool done = false;
  };

  void Submit(std::function<void(Connection&)> body);
  void Loop();
  void RunBatch(const std::vector<Task*>& batch);
  void Settle(const std::vector<Task*>& tasks);

  Connection& connection_;
  const WriteOutcomeFn on_write_;
  std::mutex mutex_;
  std::condition_variable queued_;
  std::condition_variable settled_;
  std::deque<Task*> pending_;
  bool stopping_ = false;
  std::thread thread_;
};

}  // namespace tiletune::db
