// The durable job queue: jobs, their items, and which item a device runs
// next. The state columns are authoritative; the progress blobs hold the
// counters and best-so-far of each item.
#include <stdexcept>

#include "db/page_token.h"
#include "db/sqlite_columns.h"
#include "db/sqlite_tuning_store.h"
#include "db/store_rules.h"

namespace tiletune::db {
namespace {

constexpr const char* kJobColumns =
    "id, state, device, created_at_us, started_at_us, finished_at_us, error, spec, rowid,"
    " miss_count, submitted_by, request_id";

// A job from a row selected with kJobColumns, without its items.
v1::Job JobFromRow(const Statement& row) {
  v1::Job job;
  job.set_id(row.Text(0));
  *job.mutable_spec() = ReadProto<v1::JobSpec>(row, 7, "spec of job " + job.id());
  job.set_state(static_cast<v1::JobState>(row.Int64(1)));
  job.set_device(row.Text(2));
  if (auto created = ReadTimestamp(row, 3)) *job.mutable_created_at() = *created;
  if (auto started = ReadTimestamp(row, 4)) *job.mutable_started_at() = *started;
  if (auto finished = ReadTimestamp(row, 5)) *job.mutable_finished_at() = *finished;
  job.set_error(row.Text(6));
  job.set_miss_count(row.Int64(9));
  job.set_submitted_by(row.Text(10));
  job.set_request_id(row.Text(11));
  return job;
}

void LoadItems(Connection& connection, v1::Job& job) {
  auto rows = connection.Prepare(
      "SELECT item_index, state, progress FROM job_items WHERE job_id = ? ORDER BY item_index");
  rows.Bind(job.id());
  while (rows.Step()) {
    auto* item = job.add_items();
    *item = ReadProto<v1::JobItemProgress>(
        rows, 2, "item " + std::to_string(rows.Int64(0)) + " of job " + job.id());
    item->set_index(static_cast<int>(rows.Int64(0)));
    item->set_state(static_cast<v1::JobState>(rows.Int64(1)));
  }
}

// Finishes a QUEUED or RUNNING job and cancels its unfinished items; false
// when there is no such job.
bool CloseJob(Connection& connection, const std::string& job_id, v1::JobState state,
              const std::string& error) {
  connection
      .Prepare(
          "UPDATE jobs SET state = ?1, error = ?2, finished_at_us = ?3"
          " WHERE id = ?4 AND state IN (?5, ?6)")
      .Bind(state, error, NowMicros(), job_id, v1::JOB_QUEUED, v1::JOB_RUNNING)
      .Run();
  if (connection.Changes() == 0) return false;
  connection.Prepare("UPDATE job_items SET state = ?1 WHERE job_id = ?2 AND state IN (?3, ?4)")
      .Bind(v1::JOB_CANCELLED, job_id, v1::JOB_QUEUED, v1::JOB_RUNNING)
      .Run();
  return true;
}

}  // namespace

JobAdmissionResult SqliteTuningStore::CreateJob(const v1::Job& job,
                                                const std::vector<std::string>& canonical_keys,
                                                const JobAdmission& admission) {
  RequireJobToCreate(job, canonical_keys);
  const auto& spec = job.spec();
  int64_t created = MicrosOf(job.has_created_at(), job.created_at()).value_or(NowMicros());
  // The one writer's transaction: the counts and the insert cannot be split.
  return writer_->Run([&](Connection& connection) -> JobAdmissionResult {
    ActiveJobs active;
    if (!job.request_id().empty()) {
      auto earlier =
          connection.Prepare("SELECT id, spec FROM jobs WHERE submitted_by = ? AND request_id = ?");
      if (earlier.Bind(job.submitted_by(), job.request_id()).Step()) {
        const std::string id = earlier.Text(0);
        active.same_request = {id, ReadProto<v1::JobSpec>(earlier, 1, "spec of job " + id)};
      }
    }
    auto counts = connection.Prepare(
        "SELECT COUNT(*), COALESCE(SUM(submitted_by = ?3), 0), COALESCE(SUM(name = ?4), 0)"
        " FROM jobs WHERE state IN (?1, ?2)");
    counts.Bind(v1::JOB_QUEUED, v1::JOB_RUNNING, job.submitted_by(), spec.name()).Step();
    active.all = counts.Int64(0);
    active.submitted = counts.Int64(1);
    active.named = counts.Int64(2);
    if (admission.reuse_active_for_key && canonical_keys.size() == 1) {
      auto row = connection.Prepare(
          "SELECT j.id FROM job_items i JOIN jobs j ON j.id = i.job_id"
          " WHERE i.canonical_key = ?1 AND i.state IN (?2, ?3) AND j.device = ?4"
          " AND j.state IN (?2, ?3) ORDER BY j.created_at_us, j.rowid LIMIT 1");
      if (row.Bind(canonical_keys[0], v1::JOB_QUEUED, v1::JOB_RUNNING, job.device()).Step()) {
        active.with_key = row.Text(0);
      }
    }
    if (auto judged = JudgeAdmission(spec, admission, active)) return *judged;
    connection
        .Prepare(
            "INSERT INTO jobs (id, name, state, priority, device, created_at_us, error, spec,"
            " submitted_by, request_id) VALUES (?, ?, ?, ?, ?, ?, '', ?, ?, ?)")
        .Bind(job.id(), spec.name(), v1::JOB_QUEUED, spec.priority(), job.device(), created,
              Blob{spec.SerializeAsString()}, job.submitted_by(), RequestIdColumn(job))
        .Run();
    for (int i = 0; i < spec.kernels_size(); ++i) {
      const v1::JobItemProgress progress = QueuedItem(job, i);
      connection
          .Prepare(
              "INSERT INTO job_items (job_id, item_index, canonical_key, state, progress)"
              " VALUES (?, ?, ?, ?, ?)")
          .Bind(job.id(), i, canonical_keys[i], v1::JOB_QUEUED, Blob{progress.SerializeAsString()})
          .Run();
    }
    return {.job_id = job.id()};
  });
}

std::optional<v1::Job> SqliteTuningStore::GetJob(const std::string& job_id) {
  auto reader = readers_->Acquire();
  // One snapshot for the job row and its items.
  Transaction snapshot(*reader, TransactionKind::kRead);
  auto row = reader->Prepare(std::string("SELECT ") + kJobColumns + " FROM jobs WHERE id = ?");
  if (!row.Bind(job_id).Step()) return std::nullopt;
  v1::Job job = JobFromRow(row);
  LoadItems(*reader, job);
  return job;
}

JobPage SqliteTuningStore::ListJobs(const std::vector<v1::JobState>& states, int page_size,
                                    const std::string& page_token) {
  int limit = EffectivePageSize(page_size);
  std::string sql = std::string("SELECT ") + kJobColumns + " FROM jobs WHERE 1";
  if (!states.empty()) {
    sql += " AND state IN (?";
    for (std::size_t i = 1; i < states.size(); ++i) sql += ", ?";
    sql += ")";
  }
  std::vector<std::string> after;
  if (!page_token.empty()) {
    after = DecodePageToken(page_token, 2);
    sql += " AND (created_at_us, rowid) < (?, ?)";
  }
  // Newest first; the rowid orders jobs created in the same microsecond.
  sql += " ORDER BY created_at_us DESC, rowid DESC LIMIT ?";

  auto reader = readers_->Acquire();
  Transaction snapshot(*reader, TransactionKind::kRead);
  auto rows = reader->Prepare(sql);
  int parameter = 0;
  for (auto state : states) rows.BindAt(++parameter, state);
  for (const auto& field : after) rows.BindAt(++parameter, PageTokenInt(field));
  // One row past the page tells whether another page follows.
  rows.BindAt(++parameter, limit + 1);
  JobPage page;
  while (rows.Step()) {
    if (static_cast<int>(page.jobs.size()) == limit) {
      page.next_page_token = page.tokens_after.back();
      break;
    }
    page.tokens_after.push_back(
        EncodePageToken({std::to_string(rows.Int64(3)), std::to_string(rows.Int64(8))}));
    v1::Job job = JobFromRow(rows);
    LoadItems(*reader, job);
    page.jobs.push_back(std::move(job));
  }
  return page;
}

std::optional<JobItemClaim> SqliteTuningStore::ClaimNextItem(const std::string& device) {
  return writer_->Run([&](Connection& connection) -> std::optional<JobItemClaim> {
    std::string job_id;
    int item_index = 0;
    {
      // A RUNNING job's queued items first, then the best QUEUED job.
      auto next = connection.Prepare(
          "SELECT j.id, i.item_index FROM jobs j JOIN job_items i ON i.job_id = j.id"
          " WHERE j.device = ?1 AND j.state IN (?2, ?3) AND i.state = ?2"
          " ORDER BY j.state = ?3 DESC, j.priority DESC, j.miss_count DESC, j.created_at_us,"
          " j.rowid, i.item_index"
          " LIMIT 1");
      if (!next.Bind(device, v1::JOB_QUEUED, v1::JOB_RUNNING).Step()) return std::nullopt;
      job_id = next.Text(0);
      item_index = static_cast<int>(next.Int64(1));
    }
    connection.Prepare("UPDATE job_items SET state = ? WHERE job_id = ? AND item_index = ?")
        .Bind(v1::JOB_RUNNING, job_id, item_index)
        .Run();
    connection
        .Prepare(
            "UPDATE jobs SET state = ?, started_at_us = COALESCE(started_at_us, ?) WHERE id = ?")
        .Bind(v1::JOB_RUNNING, NowMicros(), job_id)
        .Run();
    auto spec = connection.Prepare("SELECT spec FROM jobs WHERE id = ?");
    spec.Bind(job_id).Step();
    return ClaimOf(connection.path(), job_id, item_index,
                   ReadProto<v1::JobSpec>(spec, 0, "spec of job " + job_id));
  });
}

bool SqliteTuningStore::RenewLease(const std::string& job_id, int item_index, int64_t) {
  auto reader = readers_->Acquire();
  auto row =
      reader->Prepare("SELECT 1 FROM job_items WHERE job_id = ? AND item_index = ? AND state = ?");
  return row.Bind(job_id, item_index, v1::JOB_RUNNING).Step();
}

void SqliteTuningStore::UpdateItem(const std::string& job_id, const v1::JobItemProgress& item,
                                   int64_t) {
  RequireItemState(item);
  writer_->Run([&](Connection& connection) {
    connection
        .Prepare(
            "UPDATE job_items SET progress = ?1,"
            " state = CASE WHEN state = ?2 THEN state ELSE ?3 END"
            " WHERE job_id = ?4 AND item_index = ?5")
        .Bind(Blob{item.SerializeAsString()}, v1::JOB_CANCELLED, item.state(), job_id, item.index())
        .Run();
    if (connection.Changes() == 0) {
      throw std::invalid_argument("job " + job_id + " has no item " + std::to_string(item.index()));
    }
  });
}

bool SqliteTuningStore::FinishJob(const std::string& job_id, v1::JobState state,
                                  const std::string& error) {
  RequireFinishedState(state);
  return writer_->Run(
      [&](Connection& connection) { return CloseJob(connection, job_id, state, error); });
}

bool SqliteTuningStore::CancelJob(const std::string& job_id) {
  return writer_->Run(
      [&](Connection& connection) { return CloseJob(connection, job_id, v1::JOB_CANCELLED, ""); });
}

int SqliteTuningStore::RequeueInterrupted() {
  return writer_->Run([](Connection& connection) {
    connection.Prepare("UPDATE job_items SET state = ? WHERE state = ?")
        .Bind(v1::JOB_QUEUED, v1::JOB_RUNNING)
        .Run();
    return static_cast<int>(connection.Changes());
  });
}

std::map<v1::JobState, int64_t> SqliteTuningStore::CountJobsByState() {
  auto reader = readers_->Acquire();
  auto rows = reader->Prepare("SELECT state, COUNT(*) FROM jobs GROUP BY state");
  std::map<v1::JobState, int64_t> counts;
  while (rows.Step()) counts[static_cast<v1::JobState>(rows.Int64(0))] = rows.Int64(1);
  return counts;
}

void SqliteTuningStore::SetMissCounts(const std::map<std::string, int64_t>& counts) {
  if (counts.empty()) return;
  writer_->Run([&](Connection& connection) {
    for (const auto& [job_id, count] : counts) {
      connection.Prepare("UPDATE jobs SET miss_count = ? WHERE id = ?").Bind(count, job_id).Run();
    }
  });
}

}  // namespace tiletune::db
