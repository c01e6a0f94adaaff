#include "server/job_event_hub.h"

namespace tiletune::server {

JobEventHub::JobEventHub(size_t max_queued_per_subscriber)
    : max_queued_(max_queued_per_subscriber) {}

std::optional<v1::JobEvent> JobEventHub::Subscription::Next(std::chrono::milliseconds timeout) {
  std::unique_lock lock(mu_);
  cv_.wait_for(lock, timeout, [this] { return closed_ || !events_.empty(); });
  if (events_.empty()) return std::nullopt;
  v1::JobEvent event = std::move(events_.front());
  events_.pop_front();
  return event;
}

bool JobEventHub::Subscription::closed() const {
  std::lock_guard lock(mu_);
  return closed_ && events_.empty();
}

std::shared_ptr<JobEventHub::Subscription> JobEventHub::Subscribe(const std::string& job_id) {
  auto sub = std::make_shared<Subscription>();
  std::lock_guard lock(mu_);
  subs_.emplace(job_id, sub);
  return sub;
}

void JobEventHub::Unsubscribe(const std::string& job_id, const std::shared_ptr<Subscription>& sub) {
  std::lock_guard lock(mu_);
  auto [begin, end] = subs_.equal_range(job_id);
  for (auto it = begin; it != end; ++it) {
    if (it->second == sub) {
      subs_.erase(it);
      return;
    }
  }
}

void JobEventHub::Publish(const v1::JobEvent& event) {
  std::lock_guard lock(mu_);
  auto [begin, end] = subs_.equal_range(event.job_id());
  for (auto it = begin; it != end; ++it) {
    Subscription& s = *it->second;
    {
      std::lock_guard sub_lock(s.mu_);
      if (s.events_.size() >= max_queued_) s.events_.pop_front();
      s.events_.push_back(event);
    }
    s.cv_.notify_one();
  }
}

void JobEventHub::CloseAll() {
  std::lock_guard lock(mu_);
  for (auto& [id, sub] : subs_) {
    {
      std::lock_guard sub_lock(sub->mu_);
      sub->closed_ = true;
    }
    sub->cv_.notify_all();
  }
}

}  // namespace tiletune::server
