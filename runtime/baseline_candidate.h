#pragma once

#include "tiletune/v1/records.pb.h"

namespace tiletune::runtime {

// Whether the baseline step timed `candidate` after it passed validation.
inline bool Timed(const v1::BaselineCandidate& candidate) {
  return candidate.error().empty() && candidate.timing().median_us() > 0;
}

// The fastest timed candidate of `candidates` (any range of
// v1::BaselineCandidate) that `eligible` accepts, the first of equals (the
// heuristic's own order); nullptr when there is none. The baseline step
// keeps it; a launcher that cannot run our epilogue pass picks among those
// without.
template <typename Candidates, typename Eligible>
const v1::BaselineCandidate* FastestCandidate(const Candidates& candidates, Eligible eligible) {
  const v1::BaselineCandidate* fastest = nullptr;
  for (const v1::BaselineCandidate& c : candidates) {
    if (!Timed(c) || !eligible(c)) continue;
    if (!fastest || c.timing().median_us() < fastest->timing().median_us()) fastest = &c;
  }
  return fastest;
}

template <typename Candidates>
const v1::BaselineCandidate* FastestCandidate(const Candidates& candidates) {
  return FastestCandidate(candidates, [](const v1::BaselineCandidate&) { return true; });
}

}  // namespace tiletune::runtime
