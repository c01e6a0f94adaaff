// Opening a database file: creation, reopening, schema versions, and files
// that must be refused.
#include <fstream>
#include <sstream>

#include "db/tuning_store.h"
#include "store_test.h"

namespace tiletune::db {
namespace {

v1::Record Record(const std::string& device_class, double tuned_us) {
  v1::Record record;
  record.mutable_key()->set_op("gemm");
  record.set_device_class(device_class);
  record.set_winner(v1::WINNER_TUNED);
  record.mutable_tuned()->set_median_us(tuned_us);
  return record;
}

using SqliteOpen = SqliteStoreTest;

TEST_F(SqliteOpen, CreatesThenReopensWithTheData) {
  Open()->PutRecord("gemm:64x64x64", Record("cls-a", 12.5));
  ASSERT_TRUE(std::filesystem::exists(path_));
  auto found = Open()->FindRecord("gemm:64x64x64", "cls-a");
  ASSERT_TRUE(found);
  EXPECT_EQ(found->tuned().median_us(), 12.5);
}

TEST_F(SqliteOpen, WritesTheSchemaVersionAndWalMode) {
  Open();
  EXPECT_EQ(Query("PRAGMA user_version"), std::to_string(SqliteSchemaVersion()));
  EXPECT_EQ(Query("PRAGMA journal_mode"), "wal");
  EXPECT_EQ(Query("SELECT count(*) FROM sqlite_schema WHERE name IN ('devices', 'kernels',"
                  " 'records', 'trials', 'jobs', 'job_items')"),
            "6");
}

TEST_F(SqliteOpen, RefusesANewerSchemaAndLeavesItAlone) {
  Open();
  int newer = SqliteSchemaVersion() + 1;
  Query("PRAGMA user_version = " + std::to_string(newer));
  try {
    Open();
    FAIL() << "opened a newer database";
  } catch (const StoreError& e) {
    EXPECT_EQ(std::string(e.what()), path_ + ": database schema version " + std::to_string(newer) +
                                         " is newer than this tiletuned supports (" +
                                         std::to_string(SqliteSchemaVersion()) +
                                         "); upgrade tiletuned or use another --db");
  }
  EXPECT_EQ(Query("PRAGMA user_version"), std::to_string(newer));
}

TEST_F(SqliteOpen, RefusesAFileThatIsNotADatabase) {
  std::ofstream(path_) << std::string(4096, 'x');
  try {
    Open();
    FAIL() << "opened a text file";
  } catch (const StoreError& e) {
    std::string message = e.what();
    EXPECT_NE(message.find(path_), std::string::npos) << message;
    EXPECT_NE(message.find("not a database"), std::string::npos) << message;
  }
}

TEST_F(SqliteOpen, NamesAPathItCannotCreate) {
  path_ = (dir_ / "missing" / "tiletune.db").string();
  try {
    Open();
    FAIL() << "opened a file in a missing directory";
  } catch (const StoreError& e) {
    EXPECT_NE(std::string(e.what()).find(path_), std::string::npos) << e.what();
  }
}

TEST_F(SqliteOpen, RefusesACorruptFileAtQuickCheck) {
  {
    auto store = Open();
    for (int i = 0; i < 3; ++i) {
      std::vector<ImportedRecord> batch;
      for (int j = 0; j < 200; ++j) {
        batch.push_back({j + 1, "key-" + std::to_string(i * 1000 + j), Record("cls", j)});
      }
      ASSERT_TRUE(store->ImportRecords(batch, false, false).empty());
    }
  }
  // Closing checkpointed the WAL: every page is in the main file. Scribble
  // over the records table's pages (dbstat names them; the schema's own
  // pages need not be the first), leaving the schema readable.
  ASSERT_FALSE(std::filesystem::exists(path_ + "-wal"));
  const std::string page_size = Query("PRAGMA page_size");
  std::istringstream pages(
      Query("SELECT group_concat(pageno, ' ') FROM dbstat WHERE name = 'records'"));
  int scribbled = 0;
  {
    std::fstream file(path_, std::ios::in | std::ios::out | std::ios::binary);
    for (int64_t page; pages >> page; ++scribbled) {
      file.seekp((page - 1) * std::stoll(page_size));
      file << std::string(std::stoll(page_size), '\x5a');
    }
  }
  ASSERT_GT(scribbled, 2);
  try {
    Open();
    FAIL() << "opened a corrupt database";
  } catch (const StoreError& e) {
    std::string message = e.what();
    EXPECT_NE(message.find(path_), std::string::npos) << message;
    EXPECT_NE(message.find("quick_check"), std::string::npos) << message;
  }
}

TEST_F(SqliteOpen, AVersionOneDatabaseIsMigratedKeepingItsJobs) {
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
      "DROP TABLE known_failures; DROP TABLE daemons; DROP INDEX jobs_by_state;"
      " DROP INDEX jobs_by_submitter; DROP INDEX jobs_by_request_id;"
      " ALTER TABLE jobs DROP COLUMN request_id;"
      " ALTER TABLE jobs DROP COLUMN miss_count; ALTER TABLE jobs DROP COLUMN submitted_by;"
      " ALTER TABLE records DROP COLUMN achieved_tflops;"
      " ALTER TABLE records DROP COLUMN achieved_tbps;"
      " ALTER TABLE records DROP COLUMN roofline_fraction;"
      " ALTER TABLE records DROP COLUMN trust;"
      " ALTER TABLE records DROP COLUMN imported_at_us;"
      " ALTER TABLE records DROP COLUMN source_daemon;"
      " ALTER TABLE trials DROP COLUMN achieved_tflops;"
      " ALTER TABLE trials DROP COLUMN achieved_tbps;"
      " ALTER TABLE trials DROP COLUMN roofline_fraction;"
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
  EXPECT_EQ(job->request_id(), "");
  EXPECT_EQ(Query("SELECT count(*) FROM pragma_table_info('trials') WHERE name IN"
                  " ('achieved_tflops', 'achieved_tbps', 'roofline_fraction')"),
            "3");
  EXPECT_EQ(Query("SELECT count(*) FROM pragma_table_info('records') WHERE name IN"
                  " ('trust', 'imported_at_us', 'source_daemon')"),
            "3");
  KnownFailure failure;
  failure.kernel_name = "host_gemm";
  failure.params = "tile_m=32";
  failure.device_class = "cpu-abc";
  failure.toolchain = "tc1";
  failure.status = v1::TRIAL_CRASH;
  store->RememberFailure(failure);
  EXPECT_EQ(store->KnownFailures("host_gemm", "cpu-abc", "tc1").size(), 1u);
}

TEST_F(SqliteOpen, HasNoRecordChangesToWatchAsTheOnlyWriter) {
  EXPECT_EQ(Open()->WatchRecordChanges([](const std::string&, const std::string&) {}), nullptr);
}

TEST_F(SqliteOpen, ReadConnectionsMustBePositive) {
  EXPECT_THROW(Open(0), std::invalid_argument);
}

}  // namespace
}  // namespace tiletune::db
