// kill -9 of tiletuned at random points of tuning jobs, many times: after
// each kill the database passes integrity_check and still holds everything
// the daemon acknowledged; after the last restart every job finishes.
#include <gtest/gtest.h>
#include <signal.h>

#include <map>
#include <random>
#include <thread>

#include "db/tuning_store.h"
#include "kernels/core/kernel_key.h"
#include "tests/support/poll_until.h"
#include "tests/support/tiletuned_process.h"

namespace tiletune::testing {
namespace {

using namespace std::chrono_literals;

// Rounds of start, work, kill -9. The seed is printed so that a failing
// schedule can be replayed.
constexpr int kRounds = 12;
// Every this many rounds a new job arrives, so that kills land in queued,
// running and finishing work alike.
constexpr int kRoundsPerJob = 4;

v1::JobSpec SmallJob(int64_t salt) {
  v1::JobSpec spec;
  spec.set_strategy(v1::STRATEGY_RANDOM);
  spec.set_seed(static_cast<uint64_t>(salt));
  spec.mutable_budget()->set_max_variants(2);
  *spec.add_kernels() = RowKey("softmax", 32, 200 + salt);
  *spec.add_kernels() = GemmKey(48, 40, 32 + salt, {"bias"});
  return spec;
}

// What clients were told so far: job ids and, per record key, its winner.
struct Acknowledged {
  std::vector<std::string> jobs;
  std::map<std::pair<std::string, std::string>, v1::Winner> records;
  std::map<std::string, std::vector<v1::JobState>> item_states;
};

void ReadBack(v1::TuningService::Stub& stub, Acknowledged& ack) {
  grpc::ClientContext records_ctx;
  records_ctx.set_deadline(std::chrono::system_clock::now() + kEventCeiling);
  v1::ListRecordsResponse records;
  if (stub.ListRecords(&records_ctx, {}, &records).ok()) {
    for (const auto& r : records.records()) {
      ack.records[{kernels::CanonicalKeyString(r.key()), r.device_class()}] = r.winner();
    }
  }
  for (const auto& id : ack.jobs) {
    grpc::ClientContext ctx;
    ctx.set_deadline(std::chrono::system_clock::now() + kEventCeiling);
    v1::GetJobRequest request;
    request.set_job_id(id);
    v1::Job job;
    if (!stub.GetJob(&ctx, request, &job).ok()) continue;
    auto& states = ack.item_states[id];
    states.clear();
    for (const auto& item : job.items()) states.push_back(item.state());
  }
}

void ExpectDurable(const std::filesystem::path& db, const Acknowledged& ack, int round) {
  auto store = db::OpenSqliteStore({db.string()});
  ASSERT_EQ(store->IntegrityCheck(), "ok") << "round " << round;
  for (const auto& id : ack.jobs) {
    auto job = store->GetJob(id);
    ASSERT_TRUE(job) << "round " << round << ": acknowledged job " << id << " lost";
    const auto& states = ack.item_states.at(id);
    for (size_t i = 0; i < states.size(); ++i) {
      if (states[i] == v1::JOB_SUCCEEDED) {
        EXPECT_EQ(job->items(static_cast<int>(i)).state(), v1::JOB_SUCCEEDED)
            << "round " << round << ": job " << id << " item " << i << " went back";
      }
    }
  }
  for (const auto& [key, winner] : ack.records) {
    auto record = store->FindRecord(key.first, key.second);
    ASSERT_TRUE(record) << "round " << round << ": acknowledged record lost: " << key.first;
    EXPECT_EQ(record->winner(), winner) << key.first;
  }
}

TEST(CrashRecovery, RandomKillNineRoundsLoseNothingAcknowledged) {
  const unsigned seed = std::random_device{}();
  std::mt19937 rng(seed);
  std::cout << "kill schedule seed " << seed << "\n";
  TempDir dir;
  TiletunedProcess daemon(dir.path());
  Acknowledged ack;
  for (int round = 0; round < kRounds; ++round) {
    daemon.Start();
    auto stub = daemon.Stub();
    if (round % kRoundsPerJob == 0) {
      grpc::ClientContext ctx;
      v1::SubmitJobRequest request;
      *request.mutable_spec() = SmallJob(round);
      v1::SubmitJobResponse response;
      ASSERT_TRUE(stub->SubmitJob(&ctx, request, &response).ok()) << daemon.log();
      ack.jobs.push_back(response.job_id());
    }
    std::this_thread::sleep_for(
        std::chrono::milliseconds(std::uniform_int_distribution<int>(0, 1500)(rng)));
    ReadBack(*stub, ack);
    ASSERT_EQ(daemon.Stop(SIGKILL), 128 + SIGKILL);
    ExpectDurable(daemon.db_path(), ack, round);
    if (::testing::Test::HasFatalFailure()) return;
  }

  daemon.Start();
  auto stub = daemon.Stub();
  for (const auto& id : ack.jobs) {
    v1::Job job;
    PollUntil(
        [&] {
          grpc::ClientContext ctx;
          v1::GetJobRequest request;
          request.set_job_id(id);
          const auto status = stub->GetJob(&ctx, request, &job);
          EXPECT_TRUE(status.ok()) << status.error_message();
          return !status.ok() || (job.state() != v1::JOB_QUEUED && job.state() != v1::JOB_RUNNING);
        },
        In(kEventCeiling), 100ms);
    EXPECT_EQ(job.state(), v1::JOB_SUCCEEDED) << job.ShortDebugString();
  }
  ReadBack(*stub, ack);
  EXPECT_EQ(ack.records.size(), 2 * ack.jobs.size());
  EXPECT_EQ(daemon.Stop(SIGTERM), 0);
  ExpectDurable(daemon.db_path(), ack, kRounds);
}

}  // namespace
}  // namespace tiletune::testing
