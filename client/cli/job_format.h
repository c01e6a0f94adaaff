#pragma once

#include <ostream>
#include <string>

#include <google/protobuf/repeated_ptr_field.h>

#include "tiletune/v1/jobs.pb.h"

namespace tiletune::cli {

// How jobs, their items and their events look as text.

// "queued", "running", "succeeded", ...
std::string JobStateName(v1::JobState state);
bool IsFinished(v1::JobState state);

// One row per job: ID, STATE, NAME, ITEMS (finished/all), DEVICE, CREATED.
void PrintJobsTable(const google::protobuf::RepeatedPtrField<v1::Job>& jobs, std::ostream& out);

// `jobs show`: the job's fields, then PrintJobItems.
void PrintJob(const v1::Job& job, std::ostream& out);

// One row per kernel: KEY, STATE, VARIANTS, PARAMS, TUNED µs, BASELINE µs,
// SPEEDUP, WINNER; then the errors of items that have one.
void PrintJobItems(const v1::Job& job, std::ostream& out);

// The redrawn progress line: a bar over all variants, then the item the
// event is about (variants done/planned, best so far).
std::string ProgressLine(const v1::Job& job, int item_index);

// One line per event when the output is not a terminal. `job` is the latest
// state known (events normally carry it, but need not).
std::string EventLine(const v1::JobEvent& event, const v1::Job& job);

}  // namespace tiletune::cli
