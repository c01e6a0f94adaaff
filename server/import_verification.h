#pragma once

#include <optional>
#include <string>
#include <vector>

#include "db/tuning_store.h"
#include "server/service_context.h"
#include "tiletune/v1/records.pb.h"
#include "tiletune/v1/tiletune.pb.h"

namespace tiletune::server {

// An imported record is served only once this daemon's device class has
// re-measured it (unless imported with trust): ImportRecords stores it
// UNVERIFIED and queues a verify job, whose items each time only the
// record's kernel (its template and parameters) against the baseline; what
// an item measures replaces the imported record.

// Stamps each record's provenance, replacing what its line said: imported
// now by `imported_by`, from the daemon and job the line names; TRUSTED
// (served at once) when `trust`, else UNVERIFIED, saying whether a device
// here can verify it.
void MarkImported(std::vector<db::ImportedRecord>& records, bool trust,
                  const std::string& imported_by, const DeviceRegistry& devices);

// Queues verify jobs for the stored, UNVERIFIED `records` of each device
// class that this daemon has a device of, at most max_kernels_per_job
// records a job (a large import makes several jobs, so that other jobs
// take turns with them); one answer per job. The records of a class it has
// none of stay unverified, as the answer for that class says.
std::vector<v1::ImportVerification> QueueImportVerification(
    ServiceContext& context, const std::vector<db::ImportedRecord>& records);

// After CancelJob of `job` (as stored then): when it is a verify job, the
// records its cancelled items were to verify say so and what to do, in
// their provenance (seen in `records list` and by lookups); records it
// settled, or that were replaced meanwhile, are left alone.
void MarkVerificationCancelled(ServiceContext& context, const v1::Job& job);

// The kernel item `item_index` of a job with `spec` verifies, or null when
// the job is no verify job.
const v1::TunedConfig* VerifiedConfig(const v1::JobSpec& spec, int item_index);

// What verify job `job_id` leaves of `stored` (the key's record now) when
// its item for `config` measured `measured` (this daemon's record of the
// key), or measured nothing because of `error`: the measured record, or
// `stored` VERIFY_FAILED, with the import's provenance and what was found.
// nullopt when `stored` is no longer the unverified import of `config`
// (replaced meanwhile: by a tuning job, or by another import).
std::optional<v1::Record> SettledImport(const std::optional<v1::Record>& stored,
                                        const v1::TunedConfig& config, const std::string& job_id,
                                        const std::optional<v1::Record>& measured,
                                        const std::string& error);

// Whether Lookup serves `record`: not while it waits for its verification
// or after that failed.
bool Servable(const v1::Record& record);

}  // namespace tiletune::server
