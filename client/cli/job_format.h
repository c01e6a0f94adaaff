#pragma once

#include <cstddef>
#include <optional>
#include <ostream>
#include <string>

#include <google/protobuf/repeated_ptr_field.h>

#include "tiletune/v1/jobs.pb.h"

namespace tiletune::cli {

// How jobs, their items and their events look as text. Items are named by
// their index (Job.items[].index, from 0) everywhere, as the daemon's
// messages name them. Tables fit `max_width` (TextTable::Print).

// "queued", "running", "succeeded", ...
std::string JobStateName(v1::JobState state);
bool IsFinished(v1::JobState state);

// One row per job: ID, STATE, NAME, ITEMS (finished/all), DEVICE,
// SUBMITTED BY, CREATED.
void PrintJobsTable(const google::protobuf::RepeatedPtrField<v1::Job>& jobs, std::ostream& out,
                    std::optional<size_t> max_width);

// `jobs show`: the job's fields, then PrintJobItems.
void PrintJob(const v1::Job& job, std::ostream& out, std::optional<size_t> max_width);

// One row per kernel: ITEM, KEY, STATE, VARIANTS, PARAMS, TUNED µs,
// BASELINE µs, SPEEDUP, WINNER; then the errors of items that have one.
void PrintJobItems(const v1::Job& job, std::ostream& out, std::optional<size_t> max_width);

// The redrawn progress line: a bar over the variants of every item (the
// job's whole plan, known from the start), items finished, then the item
// `event` is about, if any (variants done/planned, best so far).
std::string ProgressLine(const v1::Job& job, const v1::JobEvent& event);

// One line per event when the output is not a terminal. `job` is the latest
// state known (events normally carry it, but need not).
std::string EventLine(const v1::JobEvent& event, const v1::Job& job);

}  // namespace tiletune::cli
