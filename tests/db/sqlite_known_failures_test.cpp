// Failure memory: remembered per kernel template, device class and
// toolchain, first report kept; and the migration that added it.
#include "db/tuning_store.h"
#include "store_test.h"

namespace tiletune::db {
namespace {

KnownFailure Failure(const std::string& params, v1::TrialStatus status,
                     const std::string& toolchain = "tc1") {
  return {.kernel_name = "host_gemm",
          .params = params,
          .device_class = "cpu-abc",
          .toolchain = toolchain,
          .status = status,
          .error = "worker died",
          .canonical_key = "gemm m=1",
          .job_id = "j1"};
}

using SqliteKnownFailures = StoreTest;

TEST_F(SqliteKnownFailures, AreFoundOnlyForTheSameTemplateDeviceClassAndToolchain) {
  auto store = Open();
  store->RememberFailure(Failure("tile_m=32", v1::TRIAL_CRASH));
  store->RememberFailure(Failure("tile_m=64", v1::TRIAL_TIMEOUT));
  store->RememberFailure(Failure("tile_m=32", v1::TRIAL_WRONG_RESULT, "tc2"));
  // A second report of a known failure keeps the first.
  store->RememberFailure(Failure("tile_m=32", v1::TRIAL_TIMEOUT));

  const auto known = store->KnownFailures("host_gemm", "cpu-abc", "tc1");
  ASSERT_EQ(known.size(), 2u);
  EXPECT_EQ(known.at("tile_m=32"), v1::TRIAL_CRASH);
  EXPECT_EQ(known.at("tile_m=64"), v1::TRIAL_TIMEOUT);
  EXPECT_EQ(store->KnownFailures("host_gemm", "cpu-abc", "tc2").size(), 1u);
  EXPECT_TRUE(store->KnownFailures("host_gemm", "cpu-other", "tc1").empty());
  EXPECT_TRUE(store->KnownFailures("host_softmax", "cpu-abc", "tc1").empty());
}

TEST_F(SqliteKnownFailures, SurviveReopening) {
  Open()->RememberFailure(Failure("tile_m=32", v1::TRIAL_CRASH));
  EXPECT_EQ(Open()->KnownFailures("host_gemm", "cpu-abc", "tc1").size(), 1u);
}

TEST_F(SqliteKnownFailures, AVersionOneDatabaseIsMigratedKeepingItsJobs) {
  {
    auto store = Open();
    v1::Job job;
    job.set_id("old-job");
    job.set_device("cpu:0");
    job.mutable_spec()->add_kernels()->set_op("softmax");
    store->CreateJob(job, {"softmax k"});
  }
  // Take the file back to schema version 1.
  sqlite3* db = nullptr;
  ASSERT_EQ(sqlite3_open_v2(path_.c_str(), &db, SQLITE_OPEN_READWRITE, nullptr), SQLITE_OK);
  const int rc = sqlite3_exec(
      db,
      "DROP TABLE known_failures; DROP INDEX jobs_by_state; DROP INDEX jobs_by_submitter;"
      " ALTER TABLE jobs DROP COLUMN miss_count; ALTER TABLE jobs DROP COLUMN submitted_by;"
      " CREATE INDEX jobs_by_state ON jobs (state, device, priority DESC, created_at_us);"
      " PRAGMA user_version = 1;",
      nullptr, nullptr, nullptr);
  EXPECT_EQ(rc, SQLITE_OK) << sqlite3_errmsg(db);
  sqlite3_close(db);
  ASSERT_EQ(Query("PRAGMA user_version"), "1");

  auto store = Open();
  EXPECT_EQ(Query("PRAGMA user_version"), std::to_string(SqliteSchemaVersion()));
  auto job = store->GetJob("old-job");
  ASSERT_TRUE(job);
  EXPECT_EQ(job->miss_count(), 0);
  EXPECT_EQ(job->submitted_by(), "");
  store->RememberFailure(Failure("tile_m=32", v1::TRIAL_CRASH));
  EXPECT_EQ(store->KnownFailures("host_gemm", "cpu-abc", "tc1").size(), 1u);
}

}  // namespace
}  // namespace tiletune::db
