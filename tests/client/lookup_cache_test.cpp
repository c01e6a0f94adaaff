#include "client/lookup_cache.h"

#include <gtest/gtest.h>

namespace tiletune::client {
namespace {

using std::chrono::seconds;

// A clock the test moves by hand.
struct ManualClock {
  std::chrono::steady_clock::time_point now{};
  LookupCache::Clock Function() {
    return [this] { return now; };
  }
};

v1::LookupResponse Answer(const std::string& job_id) {
  v1::LookupResponse response;
  response.set_result(v1::LookupResponse::RESULT_HIT);
  response.set_job_id(job_id);
  return response;
}

TEST(LookupCacheTest, ReturnsWhatWasStored) {
  LookupCache cache(4);
  EXPECT_FALSE(cache.Get("a"));
  cache.Put("a", Answer("1"), seconds(10));
  auto got = cache.Get("a");
  ASSERT_TRUE(got);
  EXPECT_EQ(got->job_id(), "1");
}

TEST(LookupCacheTest, EvictsTheLeastRecentlyUsedWhenFull) {
  LookupCache cache(2);
  cache.Put("a", Answer("a"), seconds(10));
  cache.Put("b", Answer("b"), seconds(10));
  ASSERT_TRUE(cache.Get("a"));  // "b" is now the least recently used
  cache.Put("c", Answer("c"), seconds(10));
  EXPECT_EQ(cache.size(), 2u);
  EXPECT_TRUE(cache.Get("a"));
  EXPECT_FALSE(cache.Get("b"));
  EXPECT_TRUE(cache.Get("c"));
}

TEST(LookupCacheTest, PutOnAnExistingKeyReplacesWithoutGrowing) {
  LookupCache cache(2);
  cache.Put("a", Answer("old"), seconds(10));
  cache.Put("a", Answer("new"), seconds(10));
  EXPECT_EQ(cache.size(), 1u);
  EXPECT_EQ(cache.Get("a")->job_id(), "new");
}

TEST(LookupCacheTest, EntriesExpireAfterTheirTtl) {
  ManualClock clock;
  LookupCache cache(4, clock.Function());
  cache.Put("hit", Answer("h"), seconds(60));
  cache.Put("miss", Answer("m"), seconds(5));
  clock.now += seconds(4);
  EXPECT_TRUE(cache.Get("miss"));
  clock.now += seconds(1);
  EXPECT_FALSE(cache.Get("miss"));
  EXPECT_TRUE(cache.Get("hit"));
  clock.now += seconds(55);
  EXPECT_FALSE(cache.Get("hit"));
  EXPECT_EQ(cache.size(), 0u);  // expired entries are dropped when found
}

TEST(LookupCacheTest, ReplacingRenewsTheExpiry) {
  ManualClock clock;
  LookupCache cache(4, clock.Function());
  cache.Put("a", Answer("1"), seconds(5));
  clock.now += seconds(4);
  cache.Put("a", Answer("2"), seconds(5));
  clock.now += seconds(4);
  EXPECT_TRUE(cache.Get("a"));
}

TEST(LookupCacheTest, CapacityZeroKeepsNothing) {
  LookupCache cache(0);
  cache.Put("a", Answer("1"), seconds(10));
  EXPECT_FALSE(cache.Get("a"));
  EXPECT_EQ(cache.size(), 0u);
}

}  // namespace
}  // namespace tiletune::client
