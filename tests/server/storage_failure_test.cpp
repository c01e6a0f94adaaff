// The real daemon when its database cannot store what it does: a full disk
// (a small tmpfs under the SQLite file) turns the mutations health and
// tiletune_database_writable down while lookups go on, and once there is
// room again, without a restart, both come back and the job and its items
// reach their true end. A job a daemon left RUNNING with every item
// finished is finished at the next start.
#include <gtest/gtest.h>
#include <sqlite3.h>

#include <functional>
#include <thread>

#include "db/tuning_store.h"
#include "tests/support/daemon_calls.h"
#include "tests/support/small_disk.h"
#include "tests/support/tiletuned_process.h"

namespace tiletune::testing {
namespace {

using namespace std::chrono_literals;

constexpr const char* kMutations = "tiletune.v1.TuningService.mutations";

bool IsFinal(v1::JobState state) {
  return state == v1::JOB_SUCCEEDED || state == v1::JOB_FAILED || state == v1::JOB_CANCELLED;
}

// Polls `holds` every 100 ms until it is true or `limit` passes.
bool Eventually(const std::function<bool()>& holds, std::chrono::seconds limit) {
  const auto until = std::chrono::steady_clock::now() + limit;
  while (std::chrono::steady_clock::now() < until) {
    if (holds()) return true;
    std::this_thread::sleep_for(100ms);
  }
  return false;
}

// `tiletune health --service SERVICE`: 0 SERVING, else not.
int HealthOf(const TiletunedProcess& daemon, const std::string& service) {
  return RunCommand({BinaryPath("tiletune"), "--server", daemon.address(), "--timeout", "5",
                     "health", "--service", service})
      .exit_code;
}

bool MetricIs(const TiletunedProcess& daemon, const std::string& sample) {
  const auto metrics = HttpGet(daemon.metrics_address(), "/metrics");
  return metrics && metrics->find("\n" + sample + "\n") != std::string::npos;
}

std::optional<v1::Job> GetJob(const TiletunedProcess& daemon, const std::string& id) {
  grpc::ClientContext ctx;
  ctx.set_deadline(std::chrono::system_clock::now() + 10s);
  v1::GetJobRequest request;
  request.set_job_id(id);
  v1::Job job;
  if (!daemon.Stub()->GetJob(&ctx, request, &job).ok()) return std::nullopt;
  return job;
}

TEST(StorageFailure, AFullDiskTurnsWritesUnhealthyAndTheJobFinishesOnceThereIsRoom) {
  TempDir dir;
  std::string why;
  auto disk = SmallDisk::Mount(dir.path() / "disk", 8 << 20, &why);
  if (!disk) GTEST_SKIP() << why;
  const auto db = disk->path() / "tiletune.db";
  std::filesystem::create_directories(dir.path() / "data");  // for the daemon's log
  TiletunedProcess daemon(dir.path() / "data",
                          {"--db", db.string(), "--db-write-retry-seconds", "0.5"});
  daemon.Start();

  // Items that each take a few seconds, so that the disk fills mid-job.
  v1::JobSpec spec;
  spec.set_strategy(v1::STRATEGY_RANDOM);
  spec.set_seed(5);
  spec.mutable_budget()->set_max_variants(3);
  for (int i = 0; i < 2; ++i) *spec.add_kernels() = GemmKey(48, 40, 32 + 8 * i, {"bias"});
  std::string job_id;
  {
    grpc::ClientContext ctx;
    v1::SubmitJobRequest request;
    *request.mutable_spec() = spec;
    v1::SubmitJobResponse response;
    ASSERT_TRUE(daemon.Stub()->SubmitJob(&ctx, request, &response).ok());
    job_id = response.job_id();
  }
  ASSERT_TRUE(Eventually(
      [&] {
        auto job = GetJob(daemon, job_id);
        return job && job->state() == v1::JOB_RUNNING;
      },
      60s));

  disk->Fill();
  ASSERT_TRUE(Eventually([&] { return HealthOf(daemon, kMutations) != 0; }, 120s)) << daemon.log();
  EXPECT_TRUE(Eventually([&] { return MetricIs(daemon, "tiletune_database_writable 0"); }, 60s));
  EXPECT_TRUE(MetricIs(daemon, "tiletune_database_reachable 1"));
  EXPECT_EQ(HealthOf(daemon, "tiletune.v1.TuningService"), 0);
  // Lookups and reads keep serving.
  {
    grpc::ClientContext ctx;
    v1::LookupRequest request;
    *request.mutable_key() = GemmKey(48, 40, 32, {"bias"});
    v1::LookupResponse response;
    const auto status = daemon.Stub()->Lookup(&ctx, request, &response);
    EXPECT_TRUE(status.ok()) << status.error_message();
  }
  // A call that must write is refused as passing, and says why.
  {
    grpc::ClientContext ctx;
    v1::SubmitJobRequest request;
    *request.mutable_spec() = spec;
    v1::SubmitJobResponse response;
    const auto status = daemon.Stub()->SubmitJob(&ctx, request, &response);
    EXPECT_EQ(status.error_code(), grpc::StatusCode::UNAVAILABLE) << status.error_message();
    EXPECT_NE(status.error_message().find("the tuning database refuses writes"), std::string::npos)
        << status.error_message();
  }
  // The job's own progress meets the full disk too: its item stops and
  // the scheduler keeps trying to store where it stands.
  EXPECT_TRUE(Eventually(
      [&] { return daemon.log().find(": not stored, trying again every") != std::string::npos; },
      120s))
      << daemon.log();
  const auto while_full = GetJob(daemon, job_id);
  ASSERT_TRUE(while_full);
  EXPECT_FALSE(IsFinal(while_full->state())) << while_full->ShortDebugString();

  // Room again: no restart, no other call.
  disk->Free();
  EXPECT_TRUE(Eventually([&] { return HealthOf(daemon, kMutations) == 0; }, 120s)) << daemon.log();
  EXPECT_TRUE(Eventually([&] { return MetricIs(daemon, "tiletune_database_writable 1"); }, 60s));
  std::optional<v1::Job> job;
  ASSERT_TRUE(Eventually(
      [&] {
        job = GetJob(daemon, job_id);
        return job && IsFinal(job->state());
      },
      300s))
      << (job ? job->ShortDebugString() : "no job") << "\n"
      << daemon.log();
  EXPECT_EQ(job->state(), v1::JOB_SUCCEEDED) << job->ShortDebugString();
  for (const auto& item : job->items()) {
    EXPECT_EQ(item.state(), v1::JOB_SUCCEEDED) << item.ShortDebugString();
  }
  EXPECT_EQ(daemon.Stop(SIGTERM), 0);
  EXPECT_EQ(db::OpenSqliteStore({db.string()})->IntegrityCheck(), "ok");
}

// Runs `sql` on the SQLite file at `path` over a connection of the test's
// own, beside the daemon's (waiting for its writer's lock).
void ExecSqlite(const std::filesystem::path& path, const std::string& sql) {
  sqlite3* db = nullptr;
  ASSERT_EQ(sqlite3_open_v2(path.c_str(), &db, SQLITE_OPEN_READWRITE, nullptr), SQLITE_OK);
  sqlite3_busy_timeout(db, 60000);
  char* error = nullptr;
  EXPECT_EQ(sqlite3_exec(db, sql.c_str(), nullptr, nullptr, &error), SQLITE_OK)
      << sql << ": " << (error ? error : "");
  sqlite3_free(error);
  sqlite3_close(db);
}

// The database refuses the record of a finished item (a trigger stands in
// for whatever made it refuse) until the daemon is stopped: the tuning is
// not lost. The item stays unfinished, resumes at the next start and stores
// its record then; the item is not told finished before its record is in.
TEST(StorageFailure, ARecordStillRefusedWhenTheDaemonStopsIsStoredAfterTheRestart) {
  TempDir dir;
  TiletunedProcess daemon(dir.path(), {"--db-write-retry-seconds", "0.2"});
  daemon.Start();
  ExecSqlite(daemon.db_path(),
             "CREATE TRIGGER refuse_records BEFORE INSERT ON records BEGIN"
             " SELECT RAISE(ABORT, 'records refused by the test'); END");
  v1::JobSpec spec;
  spec.set_strategy(v1::STRATEGY_RANDOM);
  spec.set_seed(5);
  spec.mutable_budget()->set_max_variants(2);
  *spec.add_kernels() = GemmKey(24, 16, 8);
  auto stub = daemon.Stub();
  const std::string job_id = SubmitJob(*stub, spec);
  ASSERT_TRUE(Eventually(
      [&] { return daemon.log().find("item=0: record: not stored") != std::string::npos; }, 300s))
      << daemon.log();
  EXPECT_EQ(testing::GetJob(*stub, job_id).items(0).state(), v1::JOB_RUNNING);
  EXPECT_EQ(daemon.Stop(SIGTERM), 0);

  ExecSqlite(daemon.db_path(), "DROP TRIGGER refuse_records");
  daemon.Start();
  stub = daemon.Stub();
  const v1::Job job = WaitForJob(*stub, job_id);
  EXPECT_EQ(job.state(), v1::JOB_SUCCEEDED) << job.ShortDebugString();
  v1::ListRecordsRequest request;
  v1::ListRecordsResponse records;
  grpc::ClientContext ctx;
  ASSERT_TRUE(stub->ListRecords(&ctx, request, &records).ok());
  ASSERT_EQ(records.records_size(), 1) << daemon.log();
  EXPECT_EQ(records.records(0).job_id(), job_id);
  EXPECT_EQ(daemon.Stop(SIGTERM), 0);
}

TEST(StorageFailure, AtStartARunningJobWhoseItemsAllFinishedIsFinished) {
  TempDir dir;
  const auto data = dir.path() / "data";
  std::filesystem::create_directories(data);
  {
    // What a daemon leaves when the job's end could not be stored: both
    // items finished, one of them failed, the job still RUNNING.
    auto store = db::OpenSqliteStore({(data / "tiletune.db").string()});
    v1::Job job;
    job.set_id("left-running");
    job.set_device("a-queue-no-daemon-serves");
    *job.mutable_spec()->add_kernels() = RowKey("softmax", 32, 200);
    *job.mutable_spec()->add_kernels() = RowKey("softmax", 32, 300);
    store->CreateJob(job, {"left-running/0", "left-running/1"});
    for (int i = 0; i < 2; ++i) {
      auto claim = store->ClaimNextItem("a-queue-no-daemon-serves");
      ASSERT_TRUE(claim);
      v1::JobItemProgress progress;
      progress.set_index(claim->item_index);
      progress.set_state(i == 0 ? v1::JOB_SUCCEEDED : v1::JOB_FAILED);
      if (i == 1) progress.set_error("baseline failed");
      store->UpdateItem(claim->job_id, progress, claim->lease);
    }
    ASSERT_EQ(store->GetJob("left-running")->state(), v1::JOB_RUNNING);
  }
  TiletunedProcess daemon(data);
  daemon.Start();
  std::optional<v1::Job> job;
  EXPECT_TRUE(Eventually(
      [&] {
        job = GetJob(daemon, "left-running");
        return job && IsFinal(job->state());
      },
      60s))
      << (job ? job->ShortDebugString() : "no job");
  ASSERT_TRUE(job);
  EXPECT_EQ(job->state(), v1::JOB_FAILED);
  EXPECT_EQ(job->error(), "item 1: baseline failed");
}

}  // namespace
}  // namespace tiletune::testing
