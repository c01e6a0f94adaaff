#include "runtime/compiled_code_cache.h"

#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <fstream>

#include "tests/runtime/scratch_dir.h"

namespace tiletune::runtime {
namespace {

namespace fs = std::filesystem;

// A built artifact of `bytes` bytes in a work dir of the cache.
fs::path Build(CompiledCodeCache& cache, const std::string& key, size_t bytes) {
  const fs::path file = cache.MakeWorkDir(key) / "kernel.so";
  std::ofstream(file) << std::string(bytes, 'x');
  return file;
}

TEST(CompiledCodeCache, InsertThenFind) {
  testing::ScratchDir dir;
  CompiledCodeCache cache(dir.path(), 1 << 20);
  EXPECT_FALSE(cache.Find("k1"));
  const fs::path built = Build(cache, "k1", 100);
  const fs::path stored = cache.Insert("k1", built);
  EXPECT_FALSE(fs::exists(built));
  EXPECT_EQ(stored, dir.path() / "k1.so");
  ASSERT_TRUE(cache.Find("k1"));
  EXPECT_EQ(*cache.Find("k1"), stored);
  EXPECT_EQ(cache.size_bytes(), 100);
}

// A daemon killed mid-compile leaves its work folder; the next to open the
// cache removes it, and leaves those of live processes (another daemon's,
// its own) alone.
TEST(CompiledCodeCache, OpeningRemovesTheWorkFoldersOfDeadProcesses) {
  testing::ScratchDir dir;
  const pid_t child = ::fork();
  if (child == 0) ::_exit(0);
  ASSERT_GT(child, 0);
  ::waitpid(child, nullptr, 0);  // reaped: its pid names no process now
  const fs::path dead = dir.path() / "tmp" / ("0123456789abcdef-" + std::to_string(child) + "-3");
  const fs::path live =
      dir.path() / "tmp" / ("0123456789abcdef-" + std::to_string(::getppid()) + "-1");
  const fs::path own =
      dir.path() / "tmp" / ("0123456789abcdef-" + std::to_string(::getpid()) + "-2");
  for (const fs::path& work : {dead, live, own}) {
    fs::create_directories(work);
    std::ofstream(work / "kernel.cu") << "half written";
  }
  CompiledCodeCache cache(dir.path(), 1 << 20);
  EXPECT_FALSE(fs::exists(dead));
  EXPECT_TRUE(fs::exists(live / "kernel.cu"));
  EXPECT_TRUE(fs::exists(own / "kernel.cu"));
}

TEST(CompiledCodeCache, ReopenedCacheIndexesWhatIsOnDisk) {
  testing::ScratchDir dir;
  {
    CompiledCodeCache cache(dir.path(), 1 << 20);
    cache.Insert("k1", Build(cache, "k1", 100));
    cache.Insert("k2", Build(cache, "k2", 50));
  }
  CompiledCodeCache reopened(dir.path(), 1 << 20);
  EXPECT_EQ(reopened.size_bytes(), 150);
  EXPECT_TRUE(reopened.Find("k2"));
}

TEST(CompiledCodeCache, EvictsLeastRecentlyUsedOverTheBound) {
  testing::ScratchDir dir;
  CompiledCodeCache cache(dir.path(), 250);
  cache.Insert("a", Build(cache, "a", 100));
  cache.Insert("b", Build(cache, "b", 100));
  // Make the order unambiguous whatever the file system's clock resolution.
  const auto now = fs::file_time_type::clock::now();
  fs::last_write_time(dir.path() / "a.so", now - std::chrono::hours(2));
  fs::last_write_time(dir.path() / "b.so", now - std::chrono::hours(1));
  ASSERT_TRUE(cache.Find("a"));  // a is now the most recently used
  cache.Insert("c", Build(cache, "c", 100));
  EXPECT_TRUE(fs::exists(dir.path() / "a.so"));
  EXPECT_FALSE(fs::exists(dir.path() / "b.so"));
  EXPECT_TRUE(fs::exists(dir.path() / "c.so"));
  EXPECT_FALSE(cache.Find("b"));
  EXPECT_EQ(cache.size_bytes(), 200);
}

TEST(CompiledCodeCache, KeepsANewArtifactLargerThanTheBound) {
  testing::ScratchDir dir;
  CompiledCodeCache cache(dir.path(), 10);
  cache.Insert("old", Build(cache, "old", 20));
  cache.Insert("big", Build(cache, "big", 50));
  EXPECT_TRUE(cache.Find("big"));
  EXPECT_FALSE(cache.Find("old"));
}

TEST(CompiledCodeCache, FindsWhatAnotherDaemonAdded) {
  testing::ScratchDir dir;
  CompiledCodeCache mine(dir.path(), 1 << 20);
  CompiledCodeCache theirs(dir.path(), 1 << 20);
  theirs.Insert("shared", Build(theirs, "shared", 30));
  EXPECT_TRUE(mine.Find("shared"));
  EXPECT_EQ(mine.size_bytes(), 30);
  fs::remove(dir.path() / "shared.so");  // and what they evicted is a miss
  EXPECT_FALSE(mine.Find("shared"));
  EXPECT_EQ(mine.size_bytes(), 0);
}

TEST(CompiledCodeCache, WorkDirsAreDistinct) {
  testing::ScratchDir dir;
  CompiledCodeCache cache(dir.path(), 1 << 20);
  const fs::path a = cache.MakeWorkDir("same"), b = cache.MakeWorkDir("same");
  EXPECT_NE(a, b);
  EXPECT_TRUE(fs::is_directory(a));
  EXPECT_TRUE(fs::is_directory(b));
}

}  // namespace
}  // namespace tiletune::runtime
