#include "db/sqlite_write_queue.h"

#include <cstddef>

#include "db/tuning_store.h"

namespace tiletune::db {
namespace {

// Bounds how long the first task of a batch waits on the ones after it.
constexpr std::size_t kMaxBatch = 64;

}  // namespace

WriteQueue::WriteQueue(Connection& connection, WriteOutcomeFn on_write)
    : connection_(connection), on_write_(std::move(on_write)), thread_([this] { Loop(); }) {}

WriteQueue::~WriteQueue() {
  {
    std::lock_guard lock(mutex_);
    stopping_ = true;
  }
  queued_.notify_one();
  thread_.join();
}

void WriteQueue::Submit(std::function<void(Connection&)> body) {
  Task task{std::move(body)};
  {
    std::lock_guard lock(mutex_);
    if (stopping_) throw StoreError("database " + connection_.path() + " is closed");
    pending_.push_back(&task);
  }
  queued_.notify_one();
  {
    std::unique_lock lock(mutex_);
    settled_.wait(lock, [&task] { return task.done; });
  }
  if (task.error) std::rethrow_exception(task.error);
}

void WriteQueue::Loop() {
  std::unique_lock lock(mutex_);
  while (true) {
    queued_.wait(lock, [this] { return stopping_ || !pending_.empty(); });
    if (pending_.empty()) return;
    std::vector<Task*> batch;
    while (!pending_.empty() && batch.size() < kMaxBatch) {
      batch.push_back(pending_.front());
      pending_.pop_front();
    }
    lock.unlock();
    RunBatch(batch);
    Settle(batch);
    lock.lock();
  }
}

void WriteQueue::RunBatch(const std::vector<Task*>& batch) {
  const int64_t changes_before = connection_.TotalChanges();
  bool committed = false;
  try {
    Transaction transaction(connection_, TransactionKind::kWrite);
    for (Task* task : batch) {
      connection_.Exec("SAVEPOINT task");
      try {
        task->body(connection_);
        connection_.Exec("RELEASE task");
      } catch (...) {
        task->error = std::current_exception();
        // After an I/O error or a full disk SQLite may have rolled back the
        // whole transaction: then nothing in this batch was written.
        if (connection_.InAutocommit()) throw;
        connection_.Exec("ROLLBACK TO task; RELEASE task");
      }
    }
    transaction.Commit();
    committed = true;
  } catch (...) {
    auto error = std::current_exception();
    for (Task* task : batch) {
      if (!task->error) task->error = error;
    }
  }
  if (!on_write_) return;
  // One task the disk refused outweighs the others that committed.
  for (Task* task : batch) {
    try {
      if (task->error) std::rethrow_exception(task->error);
    } catch (const StoreUnwritable& refused) {
      on_write_(&refused);
      return;
    } catch (...) {
    }
  }
  if (committed && connection_.TotalChanges() != changes_before) on_write_(nullptr);
}

void WriteQueue::Settle(const std::vector<Task*>& tasks) {
  {
    std::lock_guard lock(mutex_);
    for (Task* task : tasks) task->done = true;
  }
  settled_.notify_all();
}

}  // namespace tiletune::db
