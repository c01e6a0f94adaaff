// kill -9 of tiletuned at random points of tuning jobs, many times: after
// each kill the database passes integrity_check and still holds everything
// the daemon acknowledged; after the last restart every job finishes.
#include <gtest/gtest.h>
#include <signal.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <map>
#include <optional>
#include <random>
#include <sstream>
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

// A process as /proc shows it.
struct ProcessStat {
  std::string name;  // comm
  char state = '?';
  pid_t parent = 0;
  uint64_t started = 0;  // tells it from a later process with the same pid
};

std::optional<ProcessStat> ReadStat(pid_t pid) {
  std::ifstream in("/proc/" + std::to_string(pid) + "/stat");
  std::string text;
  if (!std::getline(in, text)) return std::nullopt;
  // The name may hold spaces and parentheses: fields go on after the last ')'.
  const auto open = text.find('('), close = text.rfind(')');
  if (open == std::string::npos || close == std::string::npos) return std::nullopt;
  ProcessStat stat;
  stat.name = text.substr(open + 1, close - open - 1);
  std::istringstream fields(text.substr(close + 1));
  fields >> stat.state >> stat.parent;
  std::string skip;
  for (int field = 5; field < 22; ++field) fields >> skip;
  fields >> stat.started;
  return stat;
}

// Every live descendant of `root`, by pid.
std::map<pid_t, ProcessStat> Descendants(pid_t root) {
  std::map<pid_t, ProcessStat> all;
  for (const auto& entry : std::filesystem::directory_iterator("/proc")) {
    const std::string name = entry.path().filename().string();
    if (name.find_first_not_of("0123456789") != std::string::npos) continue;
    const pid_t pid = std::stoi(name);
    if (auto stat = ReadStat(pid); stat && stat->state != 'Z') all[pid] = *stat;
  }
  std::map<pid_t, ProcessStat> found;
  for (bool grew = true; grew;) {
    grew = false;
    for (const auto& [pid, stat] : all) {
      if ((stat.parent == root || found.contains(stat.parent)) && !found.contains(pid)) {
        found[pid] = stat;
        grew = true;
      }
    }
  }
  return found;
}

bool StillAlive(pid_t pid, const ProcessStat& seen) {
  const auto now = ReadStat(pid);
  return now && now->state != 'Z' && now->started == seen.started;
}

TEST(CrashRecovery, ChildrenAndTheirChildrenDieWithTheDaemonOnKillNine) {
  TempDir dir;
  // A compiler that never finishes: it starts a child of its own and waits.
  // It answers Open's questions (its version; no OpenBLAS) at once.
  const auto compiler = dir.path() / "slow-cc";
  std::ofstream(compiler) << "#!/bin/sh\n"
                             "if [ \"$1\" = --version ]; then echo 'slow-cc 1.0'; exit 0; fi\n"
                             "case \"$1\" in -print-file-name=*) echo \"${1#*=}\"; exit 0;; esac\n"
                             "sleep 600 &\n"
                             "wait\n";
  std::filesystem::permissions(compiler, std::filesystem::perms::owner_all);
  std::filesystem::create_directories(dir.path() / "data");  // for the daemon's log
  TiletunedProcess daemon(dir.path() / "data",
                          {"--backends", "host", "--host-compiler", compiler.string()});
  daemon.Start();
  {
    grpc::ClientContext ctx;
    v1::SubmitJobRequest request;
    *request.mutable_spec() = SmallJob(1);
    v1::SubmitJobResponse response;
    ASSERT_TRUE(daemon.Stub()->SubmitJob(&ctx, request, &response).ok());
  }
  std::map<pid_t, ProcessStat> descendants;
  const auto deadline = std::chrono::steady_clock::now() + 60s;
  auto compiling = [&] {
    descendants = Descendants(daemon.pid());
    return std::any_of(descendants.begin(), descendants.end(),
                       [](const auto& d) { return d.second.name == "sleep"; });
  };
  while (!compiling() && std::chrono::steady_clock::now() < deadline) {
    std::this_thread::sleep_for(50ms);
  }
  ASSERT_TRUE(compiling()) << daemon.log();

  ASSERT_EQ(daemon.Stop(SIGKILL), 128 + SIGKILL);
  std::vector<std::string> alive;
  const auto gone_by = std::chrono::steady_clock::now() + 60s;
  do {
    alive.clear();
    for (const auto& [pid, stat] : descendants) {
      if (StillAlive(pid, stat)) alive.push_back(stat.name + " " + std::to_string(pid));
    }
    if (!alive.empty()) std::this_thread::sleep_for(50ms);
  } while (!alive.empty() && std::chrono::steady_clock::now() < gone_by);
  EXPECT_TRUE(alive.empty()) << ::testing::PrintToString(alive);
  for (const auto& [pid, stat] : descendants) {
    if (StillAlive(pid, stat)) ::kill(pid, SIGKILL);  // what the daemon failed to take along
  }
}

}  // namespace
}  // namespace tiletune::testing
