// The real daemon when its database cannot store what it does: a full disk
// (a small tmpfs under the SQLite file) turns the mutations health and
// tiletune_database_writable down while lookups go on, and once there is
// room again, without a restart, both come back and the job and its items
// reach their true end. A job a daemon left RUNNING with every item
// finished is finished at the next start.
#include <gtest/gtest.h>

#include <functional>
#include <thread>

#include "db/tuning_store.h"
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
