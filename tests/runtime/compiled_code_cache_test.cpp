#include "runtime/compiled_code_cache.h"

#include <gtest/gtest.h>

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
