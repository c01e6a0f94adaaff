#include "server/lookup_cache.h"

#include <gtest/gtest.h>

#include "tiletune/v1/tiletune.pb.h"

namespace tiletune::server {
namespace {

TEST(LookupCache, RemembersRecordsAndKnownMisses) {
  LookupCache cache(100);
  EXPECT_FALSE(cache.Find("c1", "k"));
  cache.Put("c1", "k", nullptr);
  auto miss = cache.Find("c1", "k");
  ASSERT_TRUE(miss);
  EXPECT_EQ(*miss, nullptr);
  auto record = std::make_shared<v1::Record>();
  record->set_speedup(2);
  cache.Put("c1", "k", record);
  ASSERT_TRUE(cache.Find("c1", "k"));
  EXPECT_EQ((*cache.Find("c1", "k"))->record->speedup(), 2);
  EXPECT_FALSE(cache.Find("c2", "k")) << "device classes are separate";
}

TEST(LookupCache, ErasesOneKeyOfOneClass) {
  LookupCache cache(100);
  cache.Put("c1", "k", nullptr);
  cache.Put("c1", "other", nullptr);
  cache.Put("c2", "k", nullptr);
  cache.Erase("c1", "k");
  EXPECT_FALSE(cache.Find("c1", "k"));
  EXPECT_TRUE(cache.Find("c1", "other"));
  EXPECT_TRUE(cache.Find("c2", "k"));
}

TEST(LookupCache, AFillThatRacedWithAnEraseIsDropped) {
  LookupCache cache(100);
  // A lookup reads the database (no record yet) ...
  uint64_t before = cache.Erasures("c1", "k");
  // ... another daemon commits the record and its announcement arrives ...
  cache.Erase("c1", "k");
  // ... and the stale miss must not be cached.
  cache.PutUnlessErased("c1", "k", nullptr, before);
  EXPECT_FALSE(cache.Find("c1", "k"));
  cache.PutUnlessErased("c1", "k", nullptr, cache.Erasures("c1", "k"));
  EXPECT_TRUE(cache.Find("c1", "k"));
  before = cache.Erasures("c2", "k");
  cache.Clear();
  cache.PutUnlessErased("c2", "k", nullptr, before);
  EXPECT_FALSE(cache.Find("c2", "k"));
}

TEST(LookupCache, StaysWithinItsBound) {
  LookupCache cache(32);
  for (int i = 0; i < 10000; ++i) cache.Put("c", std::to_string(i), nullptr);
  int present = 0;
  for (int i = 0; i < 10000; ++i) present += cache.Find("c", std::to_string(i)) ? 1 : 0;
  EXPECT_LE(present, 32);
  EXPECT_GT(present, 0);
}

TEST(LookupCache, ACachedRecordAppendedToAReplyReadsAsItsRecordField) {
  auto record = std::make_shared<v1::Record>();
  record->set_device_class("cpu-x86");
  record->set_speedup(3.5);
  record->set_winner(v1::WINNER_TUNED);
  (*record->mutable_config()->mutable_params())["tile_m"] = 64;
  record->mutable_key()->set_op("gemm");
  LookupCache cache(100);
  cache.Put("cpu-x86", "k", record);
  const auto cached = cache.Find("cpu-x86", "k");
  ASSERT_TRUE(cached && *cached);

  v1::LookupResponse reply;
  reply.set_result(v1::LookupResponse::RESULT_HIT);
  reply.set_device_class("cpu-x86");
  reply.mutable_staleness()->set_reason("");
  v1::LookupResponse read;
  ASSERT_TRUE(read.ParseFromString(reply.SerializeAsString() + (*cached)->response_field));
  v1::LookupResponse expected = reply;
  *expected.mutable_record() = *record;
  EXPECT_EQ(read.SerializeAsString(), expected.SerializeAsString());
  EXPECT_EQ(read.record().config().params().at("tile_m"), 64);
}

}  // namespace
}  // namespace tiletune::server
