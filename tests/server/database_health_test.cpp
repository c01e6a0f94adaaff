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

}  // namespace
}  // namespace tiletune::server
