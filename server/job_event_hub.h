#pragma once

#include <chrono>
#include <condition_variable>
#include <deque>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "tiletune/v1/jobs.pb.h"

namespace tiletune::server {

// Fans job events out to WatchJob streams. A subscriber that falls too far
// behind loses its oldest events (progress is cumulative, so the next event
// still carries the whole job state).
class JobEventHub {
 public:
  class Subscription {
   public:
    // The next event, or nullopt after `timeout` or once the hub closed.
    std::optional<v1::JobEvent> Next(std::chrono::milliseconds timeout);
    bool closed() const;

   private:
    friend class JobEventHub;
    mutable std::mutex mu_;
    std::condition_variable cv_;
    std::deque<v1::JobEvent> events_;
    bool closed_ = false;
  };

  explicit JobEventHub(size_t max_queued_per_subscriber = 1024);

  std::shared_ptr<Subscription> Subscribe(const std::string& job_id);
  void Unsubscribe(const std::string& job_id, const std::shared_ptr<Subscription>& sub);
  void Publish(const v1::JobEvent& event);
  // Ends every stream (daemon shutdown).
  void CloseAll();

 private:
  size_t max_queued_;
  std::mutex mu_;
  std::multimap<std::string, std::shared_ptr<Subscription>> subs_;
};

}  // namespace tiletune::server
