// The sm_90a attention families' search spaces, without compiling.
#include <gtest/gtest.h>

#include <set>
#include <string>

#include "kernels/ops/attention/attention_sm90a_space.h"
#include "tests/kernels/ops/attention/attention_sm90a_test_kernels.h"

namespace tiletune::kernels::attention {
namespace {

using testing::Problem;

TEST(AttentionSm90aSpace, PrefillVariantsFitTheH200) {
  const Sm90aAttentionProblem problems[] = {
      Problem(2, 32, 32, 4096, 4096, 128, true), Problem(2, 32, 8, 4097, 4097, 128),
      Problem(2, 8, 8, 300, 257, 64, true), Problem(2, 4, 1, 7, 1, 64),
      Problem(2, 4, 2, 1, 7, 128)};
  for (const auto& p : problems) {
    const auto variants = TmaWsAttentionSpace(p, kH200).ValidVariants();
    ASSERT_FALSE(variants.empty()) << p.q_len << "x" << p.kv_len << " d" << p.head_dim;
    for (const Variant& v : variants) {
      EXPECT_LE(TmaWsAttentionSharedBytes(p, v), kH200.max_shared_bytes_per_block)
          << VariantString(v);
      EXPECT_TRUE(v.at("consumers") == 2 || p.head_dim == 64) << VariantString(v);
      EXPECT_EQ(TmaWsAttentionThreads(v), 128 * (1 + v.at("consumers"))) << VariantString(v);
    }
  }
}

// Overlap, ping-pong and persistent blocks: ping-pong only on top of
// overlap with two consumers, persistent only with overlap (causal too:
// its blocks take pairs of tiles of equal length); overlap's
// 128-key blocks (S and P live beside O) only where the registers hold
// them (the compile test checks no variant spills).
TEST(AttentionSm90aSpace, OverlapAndPingpongOnlyWhereTheyFit) {
  auto schedules = [](const Sm90aAttentionProblem& p) {
    std::set<std::string> seen;
    for (const Variant& v : TmaWsAttentionSpace(p, kH200).ValidVariants()) {
      EXPECT_TRUE(v.at("pingpong") == 0 || (v.at("overlap") == 1 && v.at("consumers") == 2))
          << VariantString(v);
      EXPECT_TRUE(v.at("persistent") == 0 || v.at("overlap") == 1) << VariantString(v);
      seen.insert(VariantString(v));
    }
    return seen;
  };
  const auto d128 = schedules(Problem(2, 32, 8, 4096, 4096, 128, true));
  for (const char* v : {"block_k=128,consumers=2,overlap=0,persistent=0,pingpong=0,stages=2",
                        "block_k=128,consumers=2,overlap=1,persistent=0,pingpong=0,stages=3",
                        "block_k=128,consumers=2,overlap=1,persistent=0,pingpong=1,stages=3"}) {
    EXPECT_TRUE(d128.contains(v)) << v;
  }
  EXPECT_TRUE(d128.contains("block_k=128,consumers=2,overlap=1,persistent=1,pingpong=1,stages=3"));
  EXPECT_FALSE(d128.contains("block_k=128,consumers=2,overlap=0,persistent=1,pingpong=0,stages=2"));
  const auto d128_full = schedules(Problem(2, 32, 8, 4096, 4096, 128));
  EXPECT_TRUE(
      d128_full.contains("block_k=128,consumers=2,overlap=1,persistent=1,pingpong=1,stages=3"));
  EXPECT_FALSE(
      d128_full.contains("block_k=128,consumers=2,overlap=0,persistent=1,pingpong=0,stages=2"));
  const auto d64 = schedules(Problem(2, 8, 8, 300, 257, 64));
  EXPECT_TRUE(d64.contains("block_k=64,consumers=3,overlap=1,persistent=0,pingpong=0,stages=2"));
  EXPECT_FALSE(d64.contains("block_k=128,consumers=3,overlap=1,persistent=0,pingpong=0,stages=2"));
  EXPECT_TRUE(d64.contains("block_k=128,consumers=3,overlap=0,persistent=0,pingpong=0,stages=2"));
  Sm90aAttentionProblem masked = Problem(2, 32, 8, 4096, 4096, 128);
  masked.mask_tensor = true;
  const auto d128_masked = schedules(masked);
  EXPECT_FALSE(
      d128_masked.contains("block_k=128,consumers=2,overlap=1,persistent=0,pingpong=1,stages=3"));
  EXPECT_TRUE(
      d128_masked.contains("block_k=64,consumers=2,overlap=1,persistent=0,pingpong=1,stages=3"));
}

TEST(AttentionSm90aSpace, PrefillSharedBytesCountQTheRingBarriersAndAlignment) {
  // head_dim 128, block_k 128, 2 consumers, 2 stages: Q 2 x 64 x 256 B,
  // K and V 2 x 2 x 128 x 256 B, 8 barriers, one swizzle atom of slack.
  const Variant v = {{"block_k", 128}, {"consumers", 2}, {"stages", 2}};
  EXPECT_EQ(TmaWsAttentionSharedBytes(Problem(2, 32, 32, 4096, 4096, 128), v),
            32768 + 131072 + 64 + 1024);
}

TEST(AttentionSm90aSpace, WithoutSm90aBothSpacesAreEmpty) {
  DeviceDescription sm80 = kH200;
  sm80.has_sm90a = false;
  EXPECT_TRUE(
      TmaWsAttentionSpace(Problem(2, 32, 8, 4096, 4096, 128), sm80).ValidVariants().empty());
  EXPECT_TRUE(DecodeAttentionSpace(Problem(2, 32, 8, 1, 4096, 128), sm80).ValidVariants().empty());
}

TEST(AttentionSm90aSpace, UnsupportedSaysWhy) {
  Sm90aAttentionProblem masked = Problem(2, 8, 8, 128, 128, 128);
  masked.mask_tensor = true;
  EXPECT_FALSE(UnsupportedTmaWsAttention(masked).has_value());
  masked.q_len = 1;
  EXPECT_FALSE(UnsupportedDecodeAttention(masked).has_value());
  EXPECT_NE(UnsupportedTmaWsAttention(Problem(2, 8, 8, 128, 128, 96))->find("head_dim"),
            std::string::npos);
  EXPECT_FALSE(UnsupportedTmaWsAttention(Problem(2, 8, 8, 128, 128, 64)).has_value());
  EXPECT_NE(UnsupportedDecodeAttention(Problem(2, 8, 8, 17, 128, 128))->find("q_len"),
            std::string::npos);
  // 32 query heads on one KV head x 4 positions: 128 packed rows.
  EXPECT_NE(UnsupportedDecodeAttention(Problem(2, 32, 1, 4, 4096, 128))->find("packed rows"),
            std::string::npos);
  EXPECT_FALSE(UnsupportedDecodeAttention(Problem(2, 32, 8, 16, 4096, 128)).has_value());
}

TEST(AttentionSm90aSpace, DecodePacksTheGroupsRowsToSixteen) {
  EXPECT_EQ(DecodeRows(Problem(2, 32, 8, 1, 4096, 128)), 16);   // 4 rows
  EXPECT_EQ(DecodeRows(Problem(2, 32, 8, 5, 4096, 128)), 32);   // 20 rows
  EXPECT_EQ(DecodeRows(Problem(2, 32, 8, 16, 4096, 128)), 64);  // 64 rows
  EXPECT_EQ(DecodeRows(Problem(2, 8, 8, 1, 4096, 128)), 16);    // 1 row
}

TEST(AttentionSm90aSpace, DecodeVariantsFitAndSplitOnlyLongKeys) {
  const Sm90aAttentionProblem problems[] = {
      Problem(2, 32, 8, 1, 32768, 128), Problem(2, 32, 8, 16, 2048, 128, true),
      Problem(2, 32, 8, 3, 4097, 64, true), Problem(2, 8, 8, 1, 1, 128),
      Problem(2, 8, 2, 7, 7, 64)};
  for (const auto& p : problems) {
    const auto variants = DecodeAttentionSpace(p, kH200).ValidVariants();
    ASSERT_FALSE(variants.empty()) << p.q_len << "x" << p.kv_len;
    for (const Variant& v : variants) {
      const int64_t slice = v.at("block_k") / v.at("warps_k");
      EXPECT_TRUE(slice >= 16 && slice <= 64) << VariantString(v);
      EXPECT_LE(DecodeAttentionThreads(p, v), p.head_dim == 128 ? 256 : 512) << VariantString(v);
      EXPECT_LE(DecodeAttentionSharedBytes(p, v), kH200.max_shared_bytes_per_block)
          << VariantString(v);
      const int64_t key_blocks = (p.kv_len + v.at("block_k") - 1) / v.at("block_k");
      if (v.at("split") > 1) {
        EXPECT_GE(key_blocks, 2 * v.at("split") * v.at("stages")) << VariantString(v);
      }
    }
  }
  // 32K keys: splits are in the space; one key: only split 1.
  bool split_seen = false;
  for (const Variant& v : DecodeAttentionSpace(problems[0], kH200).ValidVariants()) {
    split_seen |= v.at("split") == 8;
  }
  EXPECT_TRUE(split_seen);
  for (const Variant& v : DecodeAttentionSpace(problems[3], kH200).ValidVariants()) {
    EXPECT_EQ(v.at("split"), 1) << VariantString(v);
  }
}

}  // namespace
}  // namespace tiletune::kernels::attention
