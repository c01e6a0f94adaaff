// The decision from re-timed contenders: which variant wins, the paired
// margin over the baseline, and the reasons it says VENDOR.
#include "tuner/decide_step.h"

#include <gtest/gtest.h>

namespace tiletune::tuner {
namespace {

v1::Trial TrialWith(int64_t tile) {
  v1::Trial trial;
  (*trial.mutable_params())["tile"] = tile;
  return trial;
}

Contender Rounds(const v1::Trial* trial, std::vector<double> round_medians_s) {
  return {.trial = trial, .round_medians_s = std::move(round_medians_s), .repetitions = 5};
}

TimedBaseline Baseline(double first_median_us) {
  TimedBaseline baseline{.baseline = {.name = "cublaslt"}};
  baseline.timing.set_median_us(first_median_us);
  return baseline;
}

TEST(Judge, AClearWinIsTunedAndPairsEachRoundWithTheBaselines) {
  const v1::Trial fast = TrialWith(64), second = TrialWith(32);
  TuningLimits limits;
  limits.decision_rounds = 3;
  // The runner-up of the search is the faster one in the re-timing.
  const std::vector<Contender> variants{Rounds(&fast, {60e-6, 61e-6, 62e-6}),
                                        Rounds(&second, {50e-6, 50e-6, 100e-6})};
  const Verdict v =
      Judge(variants, Rounds(nullptr, {100e-6, 100e-6, 200e-6}), Baseline(90), limits);
  ASSERT_TRUE(v.fastest);
  EXPECT_EQ(v.fastest->trial.params().at("tile"), 32);
  EXPECT_TRUE(v.tuned);
  EXPECT_DOUBLE_EQ(v.fastest->timing.median_us(), 50);
  EXPECT_EQ(v.fastest->timing.repetitions(), 5);
  // Ratios 0.5 each round: the drift of the last round cancels.
  EXPECT_NEAR(v.decision.measured_margin(), 0.5, 1e-12);
  EXPECT_NEAR(v.decision.noise(), 0, 1e-12);
  EXPECT_DOUBLE_EQ(v.baseline.median_us(), 100);
  EXPECT_DOUBLE_EQ(v.decision.baseline().median_us(), 100);
  // Winner and runner-up as the search ranked them.
  EXPECT_DOUBLE_EQ(v.decision.winner().median_us(), 61);
  EXPECT_DOUBLE_EQ(v.decision.runner_up().median_us(), 50);
  EXPECT_EQ(v.decision.runner_up_params().at("tile"), 32);
  EXPECT_EQ(v.decision.rounds(), 3);
  EXPECT_EQ(v.decision.reason().rfind("beats cublaslt by 50.00%", 0), 0u) << v.decision.reason();
}

// A baseline that does not stand for what users run (no vendor call on the
// backend) cannot be beaten into a served kernel: the key stays the vendor's.
TEST(Judge, AClearWinOverABaselineWithAVendorGapStaysTheVendors) {
  const v1::Trial only = TrialWith(16);
  TimedBaseline weak = Baseline(100);
  weak.baseline.vendor_gap = "no vendor attention call here";
  const Verdict v =
      Judge({Rounds(&only, {50e-6, 50e-6})}, Rounds(nullptr, {100e-6, 100e-6}), weak, {});
  ASSERT_TRUE(v.fastest);
  EXPECT_FALSE(v.tuned);
  EXPECT_NEAR(v.decision.measured_margin(), 0.5, 1e-12);
  EXPECT_NE(v.decision.reason().find("beats cublaslt by 50.00%"), std::string::npos);
  EXPECT_NE(v.decision.reason().find("kept as the vendor's: no vendor attention call here"),
            std::string::npos)
      << v.decision.reason();
  // An operator who asks for it gets the kernel served.
  TuningLimits trusting;
  trusting.serve_over_vendor_gap = true;
  EXPECT_TRUE(
      Judge({Rounds(&only, {50e-6, 50e-6})}, Rounds(nullptr, {100e-6, 100e-6}), weak, trusting)
          .tuned);
}

TEST(Judge, AWinWithinTheMinimumSpeedupKeepsTheVariantButSaysVendor) {
  const v1::Trial only = TrialWith(16);
  const Verdict v = Judge({Rounds(&only, {99e-6, 99e-6})}, Rounds(nullptr, {100e-6, 100e-6}),
                          Baseline(100), TuningLimits{});
  ASSERT_TRUE(v.fastest);
  EXPECT_FALSE(v.tuned);
  EXPECT_FALSE(v.decision.has_runner_up());
  EXPECT_EQ(v.decision.reason().rfind("does not beat cublaslt by 1.00%", 0), 0u)
      << v.decision.reason();
}

TEST(Judge, TheReasonNamesTheBaselinesAlgorithm) {
  const v1::Trial only = TrialWith(16);
  TimedBaseline baseline = Baseline(100);
  baseline.algorithm.emplace();
  baseline.algorithm->set_heuristic_index(5);
  baseline.algorithm->set_heuristic_results(8);
  const Verdict v = Judge({Rounds(&only, {50e-6, 50e-6})}, Rounds(nullptr, {100e-6, 100e-6}),
                          baseline, TuningLimits{});
  EXPECT_TRUE(v.tuned);
  EXPECT_EQ(v.decision.reason().rfind("beats cublaslt algo 5 of 8 by 50.00%", 0), 0u)
      << v.decision.reason();
}

TEST(Judge, ABaselineThatFailsItsReTimingKeepsItsFirstTimingAndNoVariant) {
  const v1::Trial only = TrialWith(16);
  Contender baseline_rounds = Rounds(nullptr, {100e-6});
  baseline_rounds.error = "re-timing crash: signal 11";
  const Verdict v =
      Judge({Rounds(&only, {10e-6, 10e-6})}, baseline_rounds, Baseline(90), TuningLimits{});
  EXPECT_FALSE(v.fastest);
  EXPECT_FALSE(v.tuned);
  EXPECT_DOUBLE_EQ(v.baseline.median_us(), 90);
  EXPECT_DOUBLE_EQ(v.decision.baseline().median_us(), 90);
  EXPECT_EQ(v.decision.reason(), "baseline re-timing crash: signal 11");
}

TEST(Judge, VariantsThatAllFailTheirReTimingLeaveNoneToServe) {
  const v1::Trial a = TrialWith(16), b = TrialWith(32);
  Contender first = Rounds(&a, {10e-6}), second = Rounds(&b, {});
  first.error = "re-timing timeout: killed";
  const Verdict v =
      Judge({first, second}, Rounds(nullptr, {100e-6, 100e-6}), Baseline(90), TuningLimits{});
  EXPECT_FALSE(v.fastest);
  EXPECT_DOUBLE_EQ(v.baseline.median_us(), 100);
  EXPECT_EQ(v.decision.reason(), "every variant failed its re-timing: re-timing timeout: killed");
}

TEST(Judge, NothingReTimedKeepsTheBaselinesFirstTiming) {
  TuningLimits limits;
  limits.decision_rounds = 4;
  const Verdict v = Judge({}, Contender{}, Baseline(90), limits);
  EXPECT_FALSE(v.fastest);
  EXPECT_DOUBLE_EQ(v.baseline.median_us(), 90);
  EXPECT_FALSE(v.decision.has_baseline());
  EXPECT_EQ(v.decision.rounds(), 4);
  EXPECT_EQ(v.decision.reason(), "no variant passed validation and timing");
}

}  // namespace
}  // namespace tiletune::tuner
