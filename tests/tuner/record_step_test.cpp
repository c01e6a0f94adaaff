// The record built from a verdict: TUNED with the fastest variant's config,
// or VENDOR with or without the variant that did not win by enough.
#include "tuner/record_step.h"

#include <gtest/gtest.h>

namespace tiletune::tuner {
namespace {

TuningItem Item() {
  TuningItem item{.job_id = "job-7", .item_index = 2};
  item.key.set_op("gemm");
  return item;
}

runtime::DeviceInfo Device() {
  runtime::DeviceInfo device;
  device.fingerprint.set_device_class("cpu-x86-avx2");
  device.fingerprint.set_name("test cpu");
  device.toolchain.set_compiler_version("g++ 12");
  return device;
}

Verdict WithFastest(bool tuned) {
  Verdict verdict;
  verdict.baseline.set_median_us(100);
  verdict.decision.set_rounds(5);
  verdict.decision.set_reason("the reason");
  DecidedVariant fastest;
  (*fastest.trial.mutable_params())["tile"] = 64;
  fastest.trial.set_kernel_name("host_gemm_blocked");
  fastest.trial.set_source_hash("abc123");
  fastest.trial.set_rel_error(1e-6);
  fastest.trial.mutable_validation()->set_checked_elements(10);
  fastest.trial.mutable_validation()->set_output_elements(40);
  fastest.launch.add_grid(8);
  fastest.timing.set_median_us(40);
  verdict.fastest = fastest;
  verdict.tuned = tuned;
  return verdict;
}

TEST(RecordOf, ATunedVerdictServesTheFastestVariant) {
  const v1::Record r = RecordOf(Item(), Device(), "host_gemm_naive", WithFastest(true));
  EXPECT_EQ(r.winner(), v1::WINNER_TUNED);
  EXPECT_EQ(r.key().op(), "gemm");
  EXPECT_EQ(r.device_class(), "cpu-x86-avx2");
  EXPECT_EQ(r.device().name(), "test cpu");
  EXPECT_EQ(r.toolchain().compiler_version(), "g++ 12");
  EXPECT_EQ(r.job_id(), "job-7");
  EXPECT_FALSE(r.daemon().empty());
  EXPECT_GT(r.measured_at().seconds(), 0);
  EXPECT_EQ(r.baseline_name(), "host_gemm_naive");
  EXPECT_DOUBLE_EQ(r.baseline().median_us(), 100);
  EXPECT_EQ(r.config().kernel_name(), "host_gemm_blocked");
  EXPECT_EQ(r.config().source_hash(), "abc123");
  EXPECT_EQ(r.config().params().at("tile"), 64);
  EXPECT_EQ(r.config().launch().grid(0), 8);
  EXPECT_DOUBLE_EQ(r.tuned().median_us(), 40);
  EXPECT_DOUBLE_EQ(r.speedup(), 2.5);
  EXPECT_DOUBLE_EQ(r.max_rel_error(), 1e-6);
  EXPECT_EQ(r.validation().checked_elements(), 10);
  EXPECT_EQ(r.decision().rounds(), 5);
  EXPECT_EQ(r.decision().reason(), "the reason");
}

TEST(RecordOf, AVariantThatDidNotWinByEnoughIsKeptInAVendorRecord) {
  const v1::Record r = RecordOf(Item(), Device(), "host_gemm_naive", WithFastest(false));
  EXPECT_EQ(r.winner(), v1::WINNER_VENDOR);
  EXPECT_EQ(r.config().params().at("tile"), 64);
  EXPECT_DOUBLE_EQ(r.speedup(), 2.5);
}

TEST(RecordOf, NoVariantGivesAVendorRecordWithTheBaselineOnly) {
  Verdict verdict;
  verdict.baseline.set_median_us(100);
  verdict.decision.set_reason("no variant passed validation and timing");
  const v1::Record r = RecordOf(Item(), Device(), "host_gemm_naive", verdict);
  EXPECT_EQ(r.winner(), v1::WINNER_VENDOR);
  EXPECT_FALSE(r.has_config());
  EXPECT_FALSE(r.has_tuned());
  EXPECT_EQ(r.speedup(), 0);
  EXPECT_DOUBLE_EQ(r.baseline().median_us(), 100);
  EXPECT_EQ(r.decision().reason(), "no variant passed validation and timing");
}

}  // namespace
}  // namespace tiletune::tuner
