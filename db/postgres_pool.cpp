#include "db/postgres_pool.h"

#include <stdexcept>
#include <utility>

namespace tiletune::db {

PgPool::Lease::Lease(PgPool& pool, std::unique_ptr<PgConnection> connection)
    : pool_(&pool), connection_(std::move(connection)) {}

PgPool::Lease::~Lease() {
  if (connection_) pool_->GiveBack(std::move(connection_));
}

PgPool::PgPool(std::string url, int size, int connect_timeout_seconds, WriteOutcomeFn on_write)
    : url_(std::move(url)),
      size_(size),
      connect_timeout_seconds_(connect_timeout_seconds),
      on_write_(std::move(on_write)) {
  if (size_ <= 0) throw std::invalid_argument("connections must be positive");
  if (connect_timeout_seconds_ <= 0) {
    throw std::invalid_argument("connect_timeout_seconds must be positive");
  }
  idle_.push_back(std::make_unique<PgConnection>(url_, connect_timeout_seconds_, &on_write_));
  open_ = 1;
}

PgPool::Lease PgPool::Acquire() {
  std::unique_lock lock(mutex_);
  returned_.wait(lock, [this] { return !idle_.empty() || open_ < size_; });
  while (!idle_.empty()) {
    auto connection = std::move(idle_.back());
    idle_.pop_back();
    if (connection->StillOpen()) return Lease(*this, std::move(connection));
    // Closed by the server while idle: a fresh one takes its place.
    --open_;
  }
  // Connect without holding the lock: others may borrow idle ones meanwhile.
  ++open_;
  lock.unlock();
  try {
    return Lease(*this, std::make_unique<PgConnection>(url_, connect_timeout_seconds_, &on_write_));
  } catch (...) {
    lock.lock();
    --open_;
    returned_.notify_one();
    throw;
  }
}

void PgPool::GiveBack(std::unique_ptr<PgConnection> connection) {
  bool reusable = connection->Reusable();
  if (!reusable) connection.reset();
  std::lock_guard lock(mutex_);
  if (reusable) {
    idle_.push_back(std::move(connection));
  } else {
    --open_;
  }
  returned_.notify_one();
}

}  // namespace tiletune::db
