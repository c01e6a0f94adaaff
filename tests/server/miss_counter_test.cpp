// Lookup miss counting for tune-on-miss, and the identity of toolchains that
// failure memory and staleness rest on.
#include "server/miss_counter.h"

#include <gtest/gtest.h>

#include <thread>
#include <vector>

#include "server/toolchain_identity.h"

namespace tiletune::server {
namespace {

TEST(MissCounter, CountsPerDeviceAndKeyAndReportsChangedJobsOnce) {
  MissCounter misses(100);
  EXPECT_EQ(misses.Count("cpu:0", "k1"), 1);
  EXPECT_EQ(misses.Count("cpu:0", "k1"), 2);
  EXPECT_EQ(misses.Count("cpu:1", "k1"), 1);
  // Keys without a job have nothing to report.
  EXPECT_TRUE(misses.TakeChangedJobCounts().empty());
  misses.SetJob("cpu:0", "k1", "j-1");
  EXPECT_EQ(misses.TakeChangedJobCounts(), (std::map<std::string, int64_t>{{"j-1", 2}}));
  EXPECT_TRUE(misses.TakeChangedJobCounts().empty());
  misses.Count("cpu:0", "k1");
  EXPECT_EQ(misses.TakeChangedJobCounts(), (std::map<std::string, int64_t>{{"j-1", 3}}));
}

TEST(MissCounter, ConcurrentMissesAreAllCounted) {
  MissCounter misses(100);
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; ++t) {
    threads.emplace_back([&] {
      for (int i = 0; i < 1000; ++i) misses.Count("cpu:0", "hot");
    });
  }
  for (auto& t : threads) t.join();
  EXPECT_EQ(misses.Count("cpu:0", "hot"), 4001);
}

TEST(MissCounter, PastTheKeyLimitNewKeysAreNotCounted) {
  MissCounter misses(2);
  misses.Count("cpu:0", "a");
  misses.Count("cpu:0", "b");
  EXPECT_EQ(misses.Count("cpu:0", "c"), 1);
  EXPECT_EQ(misses.Count("cpu:0", "c"), 1);
  EXPECT_EQ(misses.Count("cpu:0", "a"), 2);
}

TEST(MissCounter, AStaleRecordIsRetunedOncePerMeasurement) {
  MissCounter misses(10);
  EXPECT_TRUE(misses.FirstRetuneOf("cpu:0", "k", 1000));
  EXPECT_FALSE(misses.FirstRetuneOf("cpu:0", "k", 1000));
  // A newer record that turns stale again (another upgrade) gets its own.
  EXPECT_TRUE(misses.FirstRetuneOf("cpu:0", "k", 2000));
  EXPECT_TRUE(misses.FirstRetuneOf("cpu:1", "k", 1000));
}

v1::Toolchain Toolchain(const std::string& driver, const std::string& compiler) {
  v1::Toolchain t;
  t.set_driver_version(driver);
  t.set_runtime_version("13.0");
  t.set_compiler_version(compiler);
  t.set_kernel_library_version("1");
  return t;
}

TEST(ToolchainIdentity, FingerprintChangesWithAnyVersion) {
  const auto base = Toolchain("550.54", "nvrtc 13.0");
  EXPECT_EQ(ToolchainFingerprint(base), ToolchainFingerprint(base));
  EXPECT_NE(ToolchainFingerprint(base), ToolchainFingerprint(Toolchain("560.28", "nvrtc 13.0")));
  auto library = base;
  library.set_kernel_library_version("2");
  EXPECT_NE(ToolchainFingerprint(base), ToolchainFingerprint(library));
  // Fields do not run into each other.
  EXPECT_NE(ToolchainFingerprint(Toolchain("5", "50")), ToolchainFingerprint(Toolchain("55", "0")));
}

TEST(ToolchainIdentity, DifferenceNamesWhatChanged) {
  const auto now = Toolchain("560.28", "nvrtc 13.0");
  EXPECT_FALSE(ToolchainDifference(now, now));
  auto then = Toolchain("550.54", "nvrtc 12.4");
  then.set_kernel_library_version("");
  EXPECT_EQ(*ToolchainDifference(then, now),
            "driver 550.54 != 560.28; compiler nvrtc 12.4 != nvrtc 13.0; kernel library - != 1");
}

}  // namespace
}  // namespace tiletune::server
