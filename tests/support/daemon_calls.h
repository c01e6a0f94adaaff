#pragma once

#include <functional>
#include <string>
#include <vector>

#include "tests/support/poll_until.h"
#include "tiletune/v1/tiletune.grpc.pb.h"

namespace tiletune::testing {

// The calls flow tests make on a daemon again and again. Each expects the
// call to succeed: one that fails fails the test (with the daemon's message)
// and returns an empty answer.

// The new job's id.
std::string SubmitJob(v1::TuningService::Stub& stub, const v1::JobSpec& spec);
v1::Job GetJob(v1::TuningService::Stub& stub, const std::string& id);
// Every event of the job's WatchJob stream, until the job ends.
std::vector<v1::JobEvent> WatchJobToEnd(v1::TuningService::Stub& stub, const std::string& id);
v1::LookupResponse Lookup(v1::TuningService::Stub& stub, const v1::LookupRequest& request);
void CancelJob(v1::TuningService::Stub& stub, const std::string& id);

// Submits a long job (exhaustive over a large GEMM space, an hour's budget)
// and waits until it runs, so that later jobs stay queued until it is
// cancelled; its id.
std::string OccupyDevice(v1::TuningService::Stub& stub);

bool JobFinished(const v1::Job& job);
// Polls the job until `done` holds for it; fails the test after `ceiling`
// and returns the job as last seen.
v1::Job WaitForJob(v1::TuningService::Stub& stub, const std::string& id,
                   const std::function<bool(const v1::Job&)>& done = JobFinished,
                   std::chrono::seconds ceiling = kEventCeiling);

}  // namespace tiletune::testing
