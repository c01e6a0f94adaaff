#pragma once

#include <string>

#include "db/tuning_store.h"
#include "server/service_context.h"
#include "tiletune/v1/jobs.pb.h"

namespace tiletune::server {

// Turns a validated job spec into a stored QUEUED job: a new id, one item
// per kernel of its plan (op graphs run as the kernels of their fusion
// plans), each with the variants it plans on a device of the job's queue,
// here or one another daemon of the fleet announced (the job's progress
// total from the start), then wakes the
// scheduler. SubmitJob and the lookup path's
// tune-on-miss and stale re-tune jobs all come in through here.

// Who asks for a job: the caller's identity (Job.submitted_by) and the
// request id of its SubmitJob; both empty for jobs the daemon queues itself.
struct JobRequester {
  std::string identity;
  std::string request_id;
};

// Creates the job unless the requester's request id made one before (that
// job is answered), or `admission` refuses it or reuses another. `queue` is
// the Job.device it waits in (ManagedDevice::queue).
db::JobAdmissionResult CreateJob(ServiceContext& context, v1::JobSpec spec,
                                 const std::string& queue, const JobRequester& requester,
                                 const db::JobAdmission& admission);

}  // namespace tiletune::server
