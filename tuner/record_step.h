#pragma once

#include <string>

#include "runtime/backend.h"
#include "tiletune/v1/records.pb.h"
#include "tuner/baseline_step.h"
#include "tuner/decide_step.h"
#include "tuner/tuning_session.h"

namespace tiletune::tuner {

// The record of a tuned item on `device`, with the numbers that decided it:
// TUNED when the verdict says so, else VENDOR. Whenever the verdict has a
// fastest variant its config (named by its trial's template) and time are
// kept, served or not. The baseline's name, algorithm and every candidate
// tried come from `baseline`, its time from the verdict.
v1::Record RecordOf(const TuningItem& item, const runtime::DeviceInfo& device,
                    const TimedBaseline& baseline, const Verdict& verdict);

}  // namespace tiletune::tuner
