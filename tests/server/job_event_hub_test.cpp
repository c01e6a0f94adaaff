#include "server/job_event_hub.h"

#include <gtest/gtest.h>

#include <thread>

namespace tiletune::server {
namespace {

using namespace std::chrono_literals;

v1::JobEvent Event(const std::string& job, v1::JobEvent::Kind kind) {
  v1::JobEvent e;
  e.set_job_id(job);
  e.set_kind(kind);
  return e;
}

TEST(JobEventHub, DeliversOnlyTheJobsEventsInOrder) {
  JobEventHub hub;
  auto sub = hub.Subscribe("a");
  hub.Publish(Event("b", v1::JobEvent::KIND_VARIANT_COMPILED));
  hub.Publish(Event("a", v1::JobEvent::KIND_VARIANT_COMPILED));
  hub.Publish(Event("a", v1::JobEvent::KIND_JOB_FINISHED));
  EXPECT_EQ(sub->Next(10ms)->kind(), v1::JobEvent::KIND_VARIANT_COMPILED);
  EXPECT_EQ(sub->Next(10ms)->kind(), v1::JobEvent::KIND_JOB_FINISHED);
  EXPECT_FALSE(sub->Next(10ms));
}

TEST(JobEventHub, SlowSubscriberKeepsTheNewestAndCloseWakesWaiters) {
  JobEventHub hub(2);
  auto sub = hub.Subscribe("a");
  for (int i = 0; i < 5; ++i) {
    auto e = Event("a", v1::JobEvent::KIND_VARIANT_BENCHMARKED);
    e.set_item_index(i);
    hub.Publish(e);
  }
  EXPECT_EQ(sub->Next(10ms)->item_index(), 3);
  EXPECT_EQ(sub->Next(10ms)->item_index(), 4);
  std::thread closer([&] {
    std::this_thread::sleep_for(20ms);
    hub.CloseAll();
  });
  const auto start = std::chrono::steady_clock::now();
  // Woken by CloseAll, long before its own limit.
  EXPECT_FALSE(sub->Next(120s));
  EXPECT_LT(std::chrono::steady_clock::now() - start, 60s);
  EXPECT_TRUE(sub->closed());
  closer.join();
  hub.Unsubscribe("a", sub);
}

}  // namespace
}  // namespace tiletune::server
