// Many threads at once, and a writer killed with SIGKILL mid-stream.
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <thread>

#include "db/tuning_store.h"
#include "store_test.h"

namespace tiletune::db {
namespace {

v1::Record Record(int i) {
  v1::Record record;
  record.mutable_key()->set_op(i % 2 == 0 ? "gemm" : "softmax");
  record.set_device_class("cls-a");
  record.mutable_tuned()->set_median_us(i);
  return record;
}

using SqliteDurability = SqliteStoreTest;

TEST_F(SqliteDurability, ConcurrentWritersAndReadersLeaveASoundFile) {
  auto store = Open(3);
  for (int i = 0; i < 20; ++i) store->PutRecord("key-" + std::to_string(i), Record(i));
  constexpr int kWriters = 4;
  constexpr int kTrialsEach = 60;
  std::atomic<bool> writing = true;
  std::atomic<int> reads = 0;
  std::vector<std::thread> readers;
  for (int r = 0; r < 3; ++r) {
    readers.emplace_back([&] {
      while (writing) {
        EXPECT_TRUE(store->FindRecord("key-3", "cls-a"));
        EXPECT_EQ(store->ListRecords("", "cls-a", 50, "").records.size(), 20u);
        ++reads;
      }
    });
  }
  std::vector<std::thread> writers;
  for (int w = 0; w < kWriters; ++w) {
    writers.emplace_back([&, w] {
      for (int t = 0; t < kTrialsEach; ++t) {
        v1::Trial trial;
        trial.set_job_id("job");
        trial.set_item_index(w);
        trial.mutable_timing()->set_median_us(t);
        store->AddTrial("key-" + std::to_string(w), "cls-a", trial);
        // Rewrites an existing record: the readers always see all 20.
        store->PutRecord("key-" + std::to_string(t % 20), Record(t));
      }
    });
  }
  for (auto& writer : writers) writer.join();
  writing = false;
  for (auto& reader : readers) reader.join();

  EXPECT_GT(reads.load(), 0);
  for (int w = 0; w < kWriters; ++w) {
    auto trials = store->TrialsForItem("job", w);
    ASSERT_EQ(trials.size(), static_cast<std::size_t>(kTrialsEach));
    for (int t = 0; t < kTrialsEach; ++t) EXPECT_EQ(trials[t].timing().median_us(), t);
  }
  EXPECT_EQ(store->IntegrityCheck(), "ok");
}

// The child writes records and reports each one on the pipe once PutRecord
// has returned; it never gets to shut down cleanly.
[[noreturn]] void WriteUntilKilled(const std::string& path, int ack_fd) {
  try {
    SqliteOptions options;
    options.path = path;
    auto store = OpenSqliteStore(options);
    v1::Job job;
    job.set_id("job");
    job.set_device("cpu:0");
    job.mutable_spec()->add_kernels()->set_op("gemm");
    store->CreateJob(job, {"gemm:0"});
    store->ClaimNextItem("cpu:0");
    for (int i = 0;; ++i) {
      store->PutRecord("key-" + std::to_string(i), Record(i));
      if (write(ack_fd, &i, sizeof i) != sizeof i) _exit(3);
    }
  } catch (...) {
    _exit(2);
  }
}

TEST_F(SqliteDurability, EveryAcknowledgedWriteSurvivesSigkill) {
  int fds[2];
  ASSERT_EQ(pipe(fds), 0);
  pid_t child = fork();
  ASSERT_GE(child, 0);
  if (child == 0) {
    close(fds[0]);
    WriteUntilKilled(path_, fds[1]);
  }
  close(fds[1]);
  int last_acked = -1;
  int value = 0;
  while (last_acked < 40 && read(fds[0], &value, sizeof value) == sizeof value) last_acked = value;
  ASSERT_EQ(kill(child, SIGKILL), 0);
  int status = 0;
  ASSERT_EQ(waitpid(child, &status, 0), child);
  ASSERT_TRUE(WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL)
      << "child ended on its own, status " << status;
  // Acknowledgements still in the pipe were sent before the kill.
  while (read(fds[0], &value, sizeof value) == sizeof value) last_acked = value;
  close(fds[0]);
  ASSERT_GE(last_acked, 40);

  auto store = Open();
  EXPECT_EQ(store->IntegrityCheck(), "ok");
  for (int i = 0; i <= last_acked; ++i) {
    EXPECT_TRUE(store->FindRecord("key-" + std::to_string(i), "cls-a")) << "lost record " << i;
  }
  EXPECT_EQ(store->GetJob("job")->state(), v1::JOB_RUNNING);
  EXPECT_EQ(store->RequeueInterrupted(), 1);
}

}  // namespace
}  // namespace tiletune::db
