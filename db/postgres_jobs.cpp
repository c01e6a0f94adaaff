// The durable job queue: jobs, their items, and which item a device runs
// next. The state columns are authoritative; the progress blobs hold the
// counters and best-so-far of each item.
#include "db/page_token.h"
#include "db/postgres_columns.h"
#include "db/postgres_tuning_store.h"
#include "db/store_rules.h"

namespace tiletune::db {
namespace {

// The advisory lock job creations take turns on ("tiletune" in ASCII).
constexpr int64_t kCreateJobLock = 0x74696c6574756e65;

constexpr const char* kJobColumns =
    "id, state, device, created_at_us, started_at_us, finished_at_us, error, spec, seq,"
    " miss_count, submitted_by, request_id";

// A job from a row selected with kJobColumns, without its items.
v1::Job JobFromRow(const PgResult& rows, int row, const std::string& database) {
  v1::Job job;
  job.set_id(rows.Text(row, 0));
  *job.mutable_spec() = ReadProto<v1::JobSpec>(rows, row, 7, database, "spec of job " + job.id());
  job.set_state(static_cast<v1::JobState>(rows.Int64(row, 1)));
  job.set_device(rows.Text(row, 2));
  if (auto created = ReadTimestamp(rows, row, 3)) *job.mutable_created_at() = *created;
  if (auto started = ReadTimestamp(rows, row, 4)) *job.mutable_started_at() = *started;
  if (auto finished = ReadTimestamp(rows, row, 5)) *job.mutable_finished_at() = *finished;
  job.set_error(rows.Text(row, 6));
  job.set_miss_count(rows.Int64(row, 9));
  job.set_submitted_by(rows.Text(row, 10));
  job.set_request_id(rows.Text(row, 11));
  return job;
}

void LoadItems(PgConnection& connection, v1::Job& job) {
  auto rows = connection.Exec(
      "SELECT item_index, state, progress FROM job_items WHERE job_id = $1 ORDER BY item_index",
      PgParams(job.id()));
  for (int row = 0; row < rows.Rows(); ++row) {
    auto* item = job.add_items();
    *item = ReadProto<v1::JobItemProgress>(
        rows, row, 2, connection.name(),
        "item " + std::to_string(rows.Int64(row, 0)) + " of job " + job.id());
    item->set_index(static_cast<int>(rows.Int64(row, 0)));
    item->set_state(static_cast<v1::JobState>(rows.Int64(row, 1)));
  }
}

// Finishes a QUEUED or RUNNING job and cancels its unfinished items; false
// when there is no such job.
bool CloseJob(PgConnection& connection, const std::string& job_id, v1::JobState state,
              const std::string& error) {
  PgTransaction transaction(connection, PgTransactionKind::kWrite);
  auto closed = connection.Exec(
      "UPDATE jobs SET state = $1, error = $2, finished_at_us = $3"
      " WHERE id = $4 AND state IN ($5, $6)",
      PgParams(state, error, NowMicros(), job_id, v1::JOB_QUEUED, v1::JOB_RUNNING));
  if (closed.Affected() == 0) return false;
  connection.Exec("UPDATE job_items SET state = $1 WHERE job_id = $2 AND state IN ($3, $4)",
                  PgParams(v1::JOB_CANCELLED, job_id, v1::JOB_QUEUED, v1::JOB_RUNNING));
  transaction.Commit();
  return true;
}

}  // namespace

JobAdmissionResult PostgresTuningStore::CreateJob(const v1::Job& job,
                                                  const std::vector<std::string>& canonical_keys,
                                                  const JobAdmission& admission) {
  RequireJobToCreate(job, canonical_keys);
  const auto& spec = job.spec();
  int64_t created = MicrosOf(job.has_created_at(), job.created_at()).value_or(NowMicros());
  auto connection = pool_.Acquire();
  PgTransaction transaction(*connection, PgTransactionKind::kWrite);
  // Creations take turns, fleet-wide, so each counts the jobs the ones
  // before it created (statements in READ COMMITTED see every commit).
  connection->Exec("SELECT pg_advisory_xact_lock($1)", PgParams(kCreateJobLock));
  ActiveJobs active;
  if (!job.request_id().empty()) {
    auto earlier =
        connection->Exec("SELECT id, spec FROM jobs WHERE submitted_by = $1 AND request_id = $2",
                         PgParams(job.submitted_by(), job.request_id()));
    if (earlier.Rows() > 0) {
      const std::string id = earlier.Text(0, 0);
      active.same_request = {id, ReadProto<v1::JobSpec>(earlier, 0, 1, name_, "spec of job " + id)};
    }
  }
  auto counts = connection->Exec(
      "SELECT COUNT(*), COUNT(*) FILTER (WHERE submitted_by = $3),"
      " COUNT(*) FILTER (WHERE name = $4) FROM jobs WHERE state IN ($1, $2)",
      PgParams(v1::JOB_QUEUED, v1::JOB_RUNNING, job.submitted_by(), spec.name()));
  active.all = counts.Int64(0, 0);
  active.submitted = counts.Int64(0, 1);
  active.named = counts.Int64(0, 2);
  if (admission.reuse_active_for_key && canonical_keys.size() == 1) {
    auto rows = connection->Exec(
        "SELECT j.id FROM job_items i JOIN jobs j ON j.id = i.job_id"
        " WHERE i.canonical_key = $1 AND i.state IN ($2, $3) AND j.device = $4"
        " AND j.state IN ($2, $3) ORDER BY j.created_at_us, j.seq LIMIT 1",
        PgParams(canonical_keys[0], v1::JOB_QUEUED, v1::JOB_RUNNING, job.device()));
    if (rows.Rows() > 0) active.with_key = rows.Text(0, 0);
  }
  if (auto judged = JudgeAdmission(spec, admission, active)) return *judged;
  connection->Exec(
      "INSERT INTO jobs (id, name, state, priority, device, created_at_us, error, spec,"
      " submitted_by, request_id) VALUES ($1, $2, $3, $4, $5, $6, '', $7, $8, $9)",
      PgParams(job.id(), spec.name(), v1::JOB_QUEUED, spec.priority(), job.device(), created,
               Bytea{spec.SerializeAsString()}, job.submitted_by(), RequestIdColumn(job)));
  for (int i = 0; i < spec.kernels_size(); ++i) {
    connection->Exec(
        "INSERT INTO job_items (job_id, item_index, canonical_key, state, progress)"
        " VALUES ($1, $2, $3, $4, $5)",
        PgParams(job.id(), i, canonical_keys[i], v1::JOB_QUEUED,
                 Bytea{QueuedItem(job, i).SerializeAsString()}));
  }
  transaction.Commit();
  return {.job_id = job.id()};
}

std::optional<v1::Job> PostgresTuningStore::GetJob(const std::string& job_id) {
  auto connection = pool_.Acquire();
  // One snapshot for the job row and its items.
  PgTransaction snapshot(*connection, PgTransactionKind::kSnapshot);
  auto rows = connection->Exec(std::string("SELECT ") + kJobColumns + " FROM jobs WHERE id = $1",
                               PgParams(job_id));
  if (rows.Rows() == 0) return std::nullopt;
  v1::Job job = JobFromRow(rows, 0, name_);
  LoadItems(*connection, job);
  return job;
}

JobPage PostgresTuningStore::ListJobs(const std::vector<v1::JobState>& states, int page_size,
                                      const std::string& page_token) {
  int limit = EffectivePageSize(page_size);
  PgParams params;
  std::string sql = std::string("SELECT ") + kJobColumns + " FROM jobs WHERE TRUE";
  if (!states.empty()) {
    std::string list;
    for (auto state : states) list += (list.empty() ? "" : ", ") + params.Add(state);
    sql += " AND state IN (" + list + ")";
  }
  if (!page_token.empty()) {
    auto after = DecodePageToken(page_token, 2);
    sql += " AND (created_at_us, seq) < (" + params.Add(PageTokenInt(after[0])) + ", " +
           params.Add(PageTokenInt(after[1])) + ")";
  }
  // Newest first; seq orders jobs created in the same microsecond. One row
  // past the page tells whether another page follows.
  sql += " ORDER BY created_at_us DESC, seq DESC LIMIT " + params.Add(limit + 1);

  auto connection = pool_.Acquire();
  PgTransaction snapshot(*connection, PgTransactionKind::kSnapshot);
  auto rows = connection->Exec(sql, params);
  JobPage page;
  for (int row = 0; row < rows.Rows(); ++row) {
    if (row == limit) {
      page.next_page_token = page.tokens_after.back();
      break;
    }
    page.tokens_after.push_back(
        EncodePageToken({std::to_string(rows.Int64(row, 3)), std::to_string(rows.Int64(row, 8))}));
    v1::Job job = JobFromRow(rows, row, name_);
    LoadItems(*connection, job);
    page.jobs.push_back(std::move(job));
  }
  return page;
}

std::optional<JobItemClaim> PostgresTuningStore::ClaimNextItem(const std::string& device) {
  auto connection = pool_.Acquire();
  PgTransaction transaction(*connection, PgTransactionKind::kWrite);
  const int64_t now = NowMicros();
  // A RUNNING job's remaining items first (queued ones, and those whose
  // daemon stopped renewing its lease), then the best QUEUED job.
  auto next = connection->Exec(
      "SELECT j.id, i.item_index, j.spec FROM jobs j JOIN job_items i ON i.job_id = j.id"
      " WHERE j.device = $1 AND j.state IN ($2, $3)"
      " AND (i.state = $2 OR (i.state = $3 AND i.lease_expires_us < $4))"
      " ORDER BY j.state = $3 DESC, j.priority DESC, j.miss_count DESC, j.created_at_us, j.seq,"
      " i.item_index LIMIT 1 FOR UPDATE OF i SKIP LOCKED",
      PgParams(device, v1::JOB_QUEUED, v1::JOB_RUNNING, now));
  if (next.Rows() == 0) return std::nullopt;
  std::string job_id = next.Text(0, 0);
  int item_index = static_cast<int>(next.Int64(0, 1));
  auto leased = connection->Exec(
      "UPDATE job_items SET state = $1, owner = $2, lease = nextval('item_leases'),"
      " lease_expires_us = $3 WHERE job_id = $4 AND item_index = $5 RETURNING lease",
      PgParams(v1::JOB_RUNNING, owner_, now + lease_micros_, job_id, item_index));
  connection->Exec(
      "UPDATE jobs SET state = $1, started_at_us = COALESCE(started_at_us, $2) WHERE id = $3",
      PgParams(v1::JOB_RUNNING, now, job_id));
  auto claim = ClaimOf(name_, job_id, item_index,
                       ReadProto<v1::JobSpec>(next, 0, 2, name_, "spec of job " + job_id));
  claim.lease = leased.Int64(0, 0);
  transaction.Commit();
  return claim;
}

bool PostgresTuningStore::RenewLease(const std::string& job_id, int item_index, int64_t lease) {
  return pool_.Acquire()
             ->Exec(
                 "UPDATE job_items SET lease_expires_us = $1"
                 " WHERE job_id = $2 AND item_index = $3 AND lease = $4 AND state = $5",
                 PgParams(NowMicros() + lease_micros_, job_id, item_index, lease, v1::JOB_RUNNING))
             .Affected() == 1;
}

void PostgresTuningStore::UpdateItem(const std::string& job_id, const v1::JobItemProgress& item,
                                     int64_t lease) {
  RequireItemState(item);
  auto connection = pool_.Acquire();
  PgParams params(Bytea{item.SerializeAsString()}, v1::JOB_CANCELLED, item.state(), job_id,
                  item.index());
  std::string sql =
      "UPDATE job_items SET progress = $1, state = CASE WHEN state = $2 THEN state ELSE $3 END"
      " WHERE job_id = $4 AND item_index = $5";
  if (lease != kUnleased) sql += " AND lease = " + params.Add(lease);
  if (connection->Exec(sql, params).Affected() == 1) return;
  bool exists = connection
                    ->Exec("SELECT 1 FROM job_items WHERE job_id = $1 AND item_index = $2",
                           PgParams(job_id, item.index()))
                    .Rows() > 0;
  if (!exists) {
    throw std::invalid_argument("job " + job_id + " has no item " + std::to_string(item.index()));
  }
  throw LeaseLost("database " + name_ + ": job " + job_id + " item " +
                  std::to_string(item.index()) + ": lease " + std::to_string(lease) +
                  " was lost (it ran out and another daemon took the item over)");
}

bool PostgresTuningStore::FinishJob(const std::string& job_id, v1::JobState state,
                                    const std::string& error) {
  RequireFinishedState(state);
  return CloseJob(*pool_.Acquire(), job_id, state, error);
}

bool PostgresTuningStore::CancelJob(const std::string& job_id) {
  return CloseJob(*pool_.Acquire(), job_id, v1::JOB_CANCELLED, "");
}

int PostgresTuningStore::RequeueInterrupted() {
  // Items of other daemons are theirs until their leases run out.
  return static_cast<int>(
      pool_.Acquire()
          ->Exec("UPDATE job_items SET state = $1 WHERE state = $2 AND owner = $3",
                 PgParams(v1::JOB_QUEUED, v1::JOB_RUNNING, owner_))
          .Affected());
}

std::map<v1::JobState, int64_t> PostgresTuningStore::CountJobsByState() {
  auto rows = pool_.Acquire()->Exec("SELECT state, COUNT(*) FROM jobs GROUP BY state");
  std::map<v1::JobState, int64_t> counts;
  for (int row = 0; row < rows.Rows(); ++row) {
    counts[static_cast<v1::JobState>(rows.Int64(row, 0))] = rows.Int64(row, 1);
  }
  return counts;
}

void PostgresTuningStore::SetMissCounts(const std::map<std::string, int64_t>& counts) {
  if (counts.empty()) return;
  auto connection = pool_.Acquire();
  PgTransaction transaction(*connection, PgTransactionKind::kWrite);
  for (const auto& [job_id, count] : counts) {
    connection->Exec("UPDATE jobs SET miss_count = $1 WHERE id = $2", PgParams(count, job_id));
  }
  transaction.Commit();
}

}  // namespace tiletune::db
