// The baseline candidate kept from the timings the baseline step measured:
// the fastest that was correct and timed, the first of equals, and among
// those a caller accepts.
#include "runtime/baseline_candidate.h"

#include <gtest/gtest.h>

#include <vector>

namespace tiletune::runtime {
namespace {

v1::BaselineCandidate Candidate(int index, double median_us, std::string error = "",
                                bool epilogue_pass = false) {
  v1::BaselineCandidate c;
  c.mutable_algorithm()->set_heuristic_index(index);
  c.mutable_algorithm()->set_epilogue_pass(epilogue_pass);
  if (median_us > 0) c.mutable_timing()->set_median_us(median_us);
  c.set_error(std::move(error));
  return c;
}

TEST(FastestCandidate, TheFastestCorrectOneWinsOverFasterWrongOnes) {
  const std::vector<v1::BaselineCandidate> candidates = {
      Candidate(0, 23.2), Candidate(1, 5.0, "wrong result: relative error 0.31"),
      Candidate(2, 19.0), Candidate(3, 0, "run error: CUBLAS_STATUS_NOT_SUPPORTED"),
      Candidate(4, 21.7)};
  const v1::BaselineCandidate* kept = FastestCandidate(candidates);
  ASSERT_NE(kept, nullptr);
  EXPECT_EQ(kept->algorithm().heuristic_index(), 2);
}

TEST(FastestCandidate, EqualTimesKeepTheHeuristicsEarlierChoice) {
  const std::vector<v1::BaselineCandidate> candidates = {Candidate(0, 30), Candidate(1, 20),
                                                         Candidate(2, 20)};
  EXPECT_EQ(FastestCandidate(candidates)->algorithm().heuristic_index(), 1);
}

TEST(FastestCandidate, NoneWhenEveryCandidateFailedOrWasNeverTimed) {
  const std::vector<v1::BaselineCandidate> candidates = {
      Candidate(0, 0, "crash: signal 11"), Candidate(1, 12, "wrong result: unwritten outputs"),
      Candidate(2, 0)};
  EXPECT_EQ(FastestCandidate(candidates), nullptr);
  EXPECT_EQ(FastestCandidate(std::vector<v1::BaselineCandidate>{}), nullptr);
}

TEST(FastestCandidate, AmongThoseTheCallerAccepts) {
  // A launcher without our epilogue pass: the fastest of the library's own.
  google::protobuf::RepeatedPtrField<v1::BaselineCandidate> candidates;
  *candidates.Add() = Candidate(0, 40);
  *candidates.Add() = Candidate(0, 30, "", true);
  *candidates.Add() = Candidate(1, 35);
  const auto* kept = FastestCandidate(
      candidates, [](const v1::BaselineCandidate& c) { return !c.algorithm().epilogue_pass(); });
  ASSERT_NE(kept, nullptr);
  EXPECT_EQ(kept->algorithm().heuristic_index(), 1);
  EXPECT_FALSE(kept->algorithm().epilogue_pass());
  EXPECT_TRUE(FastestCandidate(candidates)->algorithm().epilogue_pass());
}

}  // namespace
}  // namespace tiletune::runtime
