#pragma once

#include <functional>
#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "db/tuning_store.h"

namespace tiletune::db {

// What every TuningStore implementation checks and decides the same way,
// whatever its engine. The Require* functions throw std::invalid_argument
// naming the field.

void RequireDeviceClass(const v1::DeviceFingerprint& device);
void RequireSourceHash(const std::string& source_hash);
void RequireRecordKey(const std::string& canonical_key, const v1::Record& record);
void RequireJobToCreate(const v1::Job& job, const std::vector<std::string>& canonical_keys);
void RequireItemState(const v1::JobItemProgress& item);
void RequireFinishedState(v1::JobState state);

bool IsFinished(v1::JobState state);

// A job stored earlier with the (submitted_by, request_id) of one to create.
struct EarlierRequest {
  std::string job_id;
  v1::JobSpec spec;
};

// What CreateJob's admission looks at, read in its transaction: the job
// created earlier with the same request id, then the active jobs: all of
// them, those of the job's submitter and of its spec name, and
// (reuse_active_for_key) the oldest with an unfinished item for the job's
// one key in its queue.
struct ActiveJobs {
  std::optional<EarlierRequest> same_request;
  int64_t all = 0;
  int64_t submitted = 0;
  int64_t named = 0;
  std::optional<std::string> with_key;
};
// The answer an earlier job with the request id of one to create gives, or
// the refusal or reuse `admission` makes of it given `active`; nullopt:
// create it. The spec of a repeated request is compared field by field, not
// by its stored bytes (serialization is not canonical).
std::optional<JobAdmissionResult> JudgeAdmission(const v1::JobSpec& spec,
                                                 const JobAdmission& admission,
                                                 const ActiveJobs& active);

// The progress item `index` of `job` starts with when the job is created:
// QUEUED, its spec kernel, and the variants job.items(index) plans.
v1::JobItemProgress QueuedItem(const v1::Job& job, int index);

// The claim of item `item_index` of a job with `spec`. Throws StoreError,
// naming `database`, when the stored spec has no such kernel.
JobItemClaim ClaimOf(const std::string& database, const std::string& job_id, int item_index,
                     v1::JobSpec spec);

// daemon.daemon_id must be set (std::invalid_argument naming it).
void RequireDaemonId(const v1::FleetDaemon& daemon);
// A daemon as ListDaemons answers it: as stored, with its heartbeat time and
// age at `now_us`.
v1::FleetDaemon ListedDaemon(v1::FleetDaemon stored, int64_t heartbeat_us, int64_t now_us);

// Import lines keyed (canonical key, device class) -> the first line seen.
using ImportLinesSeen = std::map<std::pair<std::string, std::string>, int>;
// Whether a record exists for (canonical key, device class).
using RecordExistsFn = std::function<bool(const std::string&, const std::string&)>;

// What import reports for one line, or nullopt when the line may be written.
std::optional<v1::ImportReject> CheckImportLine(const ImportedRecord& item, bool replace,
                                                ImportLinesSeen& seen,
                                                const RecordExistsFn& record_exists);

}  // namespace tiletune::db
