#include "server/database_health.h"

#include <gtest/gtest.h>

#include <vector>

namespace tiletune::server {
namespace {

TEST(DatabaseHealth, EachChangeIsReportedOnceAndReportRepeatsTheState) {
  std::vector<bool> seen;
  DatabaseHealth health([&seen](bool reachable) { seen.push_back(reachable); });
  EXPECT_TRUE(health.reachable());
  health.Reachable();
  EXPECT_TRUE(seen.empty());

  health.Unreachable("connection refused");
  health.Unreachable("connection refused again");
  EXPECT_FALSE(health.reachable());
  EXPECT_EQ(health.why(), "connection refused again");
  EXPECT_EQ(seen, std::vector<bool>{false});

  health.Report();
  EXPECT_EQ(seen, (std::vector<bool>{false, false}));
  health.Reachable();
  health.Reachable();
  EXPECT_TRUE(health.reachable());
  EXPECT_EQ(seen, (std::vector<bool>{false, false, true}));
}

TEST(DatabaseHealth, AttemptSkipsCallsWhileUnreachableAndMarksWhatFindsItSo) {
  DatabaseHealth health;
  int calls = 0;
  EXPECT_TRUE(health.Attempt([&] { ++calls; }));
  EXPECT_FALSE(health.Attempt([&] {
    ++calls;
    throw db::StoreUnreachable("connection lost");
  }));
  EXPECT_FALSE(health.reachable());
  EXPECT_EQ(health.why(), "connection lost");
  EXPECT_FALSE(health.Attempt([&] { ++calls; }));  // not run
  EXPECT_EQ(calls, 2);
  health.Reachable();
  // Other store errors are the caller's to handle.
  EXPECT_THROW(health.Attempt([] { throw db::StoreError("disk full"); }), db::StoreError);
  EXPECT_TRUE(health.reachable());
}

TEST(DatabaseHealth, ARefusedWriteMarksItUnusableUntilAWriteLands) {
  std::vector<bool> seen;
  DatabaseHealth health([&seen](bool usable) { seen.push_back(usable); });
  const db::StoreUnwritable full("database or disk is full");
  health.WriteOutcome(&full);
  health.WriteOutcome(&full);
  EXPECT_FALSE(health.writable());
  EXPECT_TRUE(health.reachable());
  EXPECT_EQ(seen, std::vector<bool>{false});
  // Unreachable meanwhile and back: still refusing writes.
  health.Unreachable("connection lost");
  health.Reachable();
  EXPECT_EQ(seen, (std::vector<bool>{false, false, false}));
  health.WriteOutcome(nullptr);
  health.WriteOutcome(nullptr);
  EXPECT_TRUE(health.writable());
  EXPECT_EQ(seen, (std::vector<bool>{false, false, false, true}));
}

}  // namespace
}  // namespace tiletune::server
