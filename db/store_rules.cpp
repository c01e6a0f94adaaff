#include "db/store_rules.h"

#include <stdexcept>

#include <google/protobuf/util/message_differencer.h>

#include "db/column_values.h"
#include "db/page_token.h"

namespace tiletune::db {

void TuningStore::ExportRecords(const std::string& op, const std::string& device_class,
                                const std::function<void(const v1::Record&)>& sink) {
  std::string token;
  do {
    RecordPage page = ListRecords(op, device_class, kMaxPageSize, token);
    for (const auto& record : page.records) sink(record);
    token = page.next_page_token;
  } while (!token.empty());
}

void RequireDeviceClass(const v1::DeviceFingerprint& device) {
  if (device.device_class().empty()) {
    throw std::invalid_argument("device.device_class is required");
  }
}

void RequireSourceHash(const std::string& source_hash) {
  if (source_hash.empty()) throw std::invalid_argument("source_hash is required");
}

void RequireDaemonId(const v1::FleetDaemon& daemon) {
  if (daemon.daemon_id().empty()) throw std::invalid_argument("daemon.daemon_id is required");
}

v1::FleetDaemon ListedDaemon(v1::FleetDaemon stored, int64_t heartbeat_us, int64_t now_us) {
  *stored.mutable_last_heartbeat() = TimestampOfMicros(heartbeat_us);
  stored.set_heartbeat_age_seconds(static_cast<double>(now_us - heartbeat_us) / 1e6);
  return stored;
}

void RequireRecordKey(const std::string& canonical_key, const v1::Record& record) {
  if (canonical_key.empty()) throw std::invalid_argument("record.key: canonical key is empty");
  if (record.device_class().empty()) {
    throw std::invalid_argument("record.device_class is required");
  }
}

void RequireJobToCreate(const v1::Job& job, const std::vector<std::string>& canonical_keys) {
  const auto& spec = job.spec();
  if (job.id().empty()) throw std::invalid_argument("job.id is required");
  if (job.device().empty()) throw std::invalid_argument("job.device is required");
  if (spec.kernels_size() == 0) {
    throw std::invalid_argument("spec.kernels: a job needs at least one kernel");
  }
  if (static_cast<int>(canonical_keys.size()) != spec.kernels_size()) {
    throw std::invalid_argument("canonical_keys: " + std::to_string(canonical_keys.size()) +
                                " keys for " + std::to_string(spec.kernels_size()) + " kernels");
  }
}

std::optional<JobAdmissionResult> JudgeAdmission(const v1::JobSpec& spec,
                                                 const JobAdmission& admission,
                                                 const ActiveJobs& active) {
  using Outcome = JobAdmissionResult::Outcome;
  if (const auto& earlier = active.same_request) {
    const bool same = google::protobuf::util::MessageDifferencer::Equals(earlier->spec, spec);
    return JobAdmissionResult{.outcome = same ? Outcome::kAlreadyExists : Outcome::kRequestIdTaken,
                              .job_id = earlier->job_id};
  }
  if (admission.reuse_active_for_key && active.with_key) {
    return JobAdmissionResult{.outcome = Outcome::kReused, .job_id = *active.with_key};
  }
  const std::pair<int64_t, int64_t> caps[] = {{admission.max_active, active.all},
                                              {admission.max_active_submitted, active.submitted},
                                              {admission.max_active_named, active.named}};
  const Outcome refusals[] = {Outcome::kTooManyActive, Outcome::kTooManySubmitted,
                              Outcome::kTooManyNamed};
  for (int i = 0; i < 3; ++i) {
    const auto [cap, count] = caps[i];
    if (cap > 0 && count >= cap) return JobAdmissionResult{.outcome = refusals[i], .active = count};
  }
  return std::nullopt;
}

void RequireItemState(const v1::JobItemProgress& item) {
  if (item.state() == v1::JOB_STATE_UNSPECIFIED) {
    throw std::invalid_argument("item.state is required");
  }
}

void RequireFinishedState(v1::JobState state) {
  if (!IsFinished(state)) {
    throw std::invalid_argument("state: a job finishes as SUCCEEDED, FAILED or CANCELLED, not " +
                                v1::JobState_Name(state));
  }
}

bool IsFinished(v1::JobState state) {
  return state == v1::JOB_SUCCEEDED || state == v1::JOB_FAILED || state == v1::JOB_CANCELLED;
}

v1::JobItemProgress QueuedItem(const v1::Job& job, int index) {
  v1::JobItemProgress progress;
  progress.set_index(index);
  *progress.mutable_key() = job.spec().kernels(index);
  progress.set_state(v1::JOB_QUEUED);
  if (index < job.items_size()) progress.set_variants_planned(job.items(index).variants_planned());
  return progress;
}

JobItemClaim ClaimOf(const std::string& database, const std::string& job_id, int item_index,
                     v1::JobSpec spec) {
  if (item_index >= spec.kernels_size()) {
    throw StoreError("database " + database + ": job " + job_id + " has item " +
                     std::to_string(item_index) + " but its spec only " +
                     std::to_string(spec.kernels_size()) + " kernels");
  }
  JobItemClaim claim;
  claim.job_id = job_id;
  claim.item_index = item_index;
  claim.key = spec.kernels(item_index);
  claim.spec = std::move(spec);
  return claim;
}

std::optional<v1::ImportReject> CheckImportLine(const ImportedRecord& item, bool replace,
                                                ImportLinesSeen& seen,
                                                const RecordExistsFn& record_exists) {
  v1::ImportReject reject;
  reject.set_line(item.line);
  reject.set_field("record.key");
  if (item.canonical_key.empty()) {
    reject.set_message("has no canonical key");
    return reject;
  }
  if (item.record.device_class().empty()) {
    reject.set_field("record.device_class");
    reject.set_message("is required");
    return reject;
  }
  auto [earlier, first] =
      seen.emplace(std::pair{item.canonical_key, item.record.device_class()}, item.line);
  if (!first) {
    reject.set_message("duplicate of line " + std::to_string(earlier->second));
    return reject;
  }
  if (!replace && record_exists(item.canonical_key, item.record.device_class())) {
    reject.set_message(
        "record already exists; import with replace to overwrite it (`tiletune records import "
        "--replace`)");
    return reject;
  }
  return std::nullopt;
}

}  // namespace tiletune::db
