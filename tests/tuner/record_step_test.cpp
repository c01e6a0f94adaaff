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

TimedBaseline HostBaseline() {
  return {.baseline = {.name = "host_gemm_naive"}};
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
  const v1::Record r = RecordOf(Item(), Device(), HostBaseline(), WithFastest(true));
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
  EXPECT_FALSE(r.has_baseline_algorithm());
  EXPECT_EQ(r.baseline_candidates_size(), 0);
}

TEST(RecordOf, AVendorBaselineKeepsItsAlgorithmAndEveryCandidateTried) {
  TimedBaseline baseline{.baseline = {.name = "cublasLt", .vendor_library = "cublasLt"}};
  for (int index : {0, 1, 2}) {
    v1::BaselineCandidate& c = baseline.candidates.emplace_back();
    c.mutable_algorithm()->set_heuristic_index(index);
    c.mutable_algorithm()->set_heuristic_results(3);
    c.mutable_algorithm()->set_description("cublasLt algo " + std::to_string(index) + " of 3");
    if (index == 1) {
      c.set_error("wrong result: relative error 0.5");
    } else {
      c.mutable_timing()->set_median_us(index == 0 ? 120 : 100);
    }
  }
  baseline.algorithm = baseline.candidates[2].algorithm();
  const v1::Record r = RecordOf(Item(), Device(), baseline, WithFastest(true));
  EXPECT_EQ(r.baseline_name(), "cublasLt");
  EXPECT_EQ(r.baseline_algorithm().description(), "cublasLt algo 2 of 3");
  ASSERT_EQ(r.baseline_candidates_size(), 3);
  EXPECT_DOUBLE_EQ(r.baseline_candidates(0).timing().median_us(), 120);
  EXPECT_EQ(r.baseline_candidates(1).error(), "wrong result: relative error 0.5");
  EXPECT_EQ(r.baseline_candidates(2).algorithm().heuristic_index(), 2);
  // The baseline's time is the decision's re-timing, not the first one.
  EXPECT_DOUBLE_EQ(r.baseline().median_us(), 100);
}

TEST(RecordOf, AVariantThatDidNotWinByEnoughIsKeptInAVendorRecord) {
  const v1::Record r = RecordOf(Item(), Device(), HostBaseline(), WithFastest(false));
  EXPECT_EQ(r.winner(), v1::WINNER_VENDOR);
  EXPECT_EQ(r.config().params().at("tile"), 64);
  EXPECT_DOUBLE_EQ(r.speedup(), 2.5);
}

TEST(RecordOf, NoVariantGivesAVendorRecordWithTheBaselineOnly) {
  Verdict verdict;
  verdict.baseline.set_median_us(100);
  verdict.decision.set_reason("no variant passed validation and timing");
  const v1::Record r = RecordOf(Item(), Device(), HostBaseline(), verdict);
  EXPECT_EQ(r.winner(), v1::WINNER_VENDOR);
  EXPECT_FALSE(r.has_config());
  EXPECT_FALSE(r.has_tuned());
  EXPECT_EQ(r.speedup(), 0);
  EXPECT_DOUBLE_EQ(r.baseline().median_us(), 100);
  EXPECT_EQ(r.decision().reason(), "no variant passed validation and timing");
}

}  // namespace
}  // namespace tiletune::tuner
