// tiletuned as a process: health and readiness, devices, SIGTERM drain,
// kill -9 in the middle of a job and resumption.
#include <gtest/gtest.h>
#include <signal.h>

#include <filesystem>
#include <thread>

#include "db/tuning_store.h"
#include "tests/support/daemon_calls.h"
#include "tests/support/poll_until.h"
#include "tests/support/tiletuned_process.h"

namespace tiletune::testing {
namespace {

using namespace std::chrono_literals;

TEST(DaemonLifecycle, ServesHealthDevicesAndStopsCleanlyOnSigterm) {
  TempDir dir;
  TiletunedProcess daemon(dir.path());
  daemon.Start();

  auto health = RunCommand({BinaryPath("tiletune"), "--server", daemon.address(), "health"});
  EXPECT_EQ(health.exit_code, 0) << health.err;
  EXPECT_NE(health.out.find("SERVING"), std::string::npos);

  auto stub = daemon.Stub();
  grpc::ClientContext ctx;
  v1::ListDevicesResponse devices;
  ASSERT_TRUE(stub->ListDevices(&ctx, {}, &devices).ok());
  ASSERT_GE(devices.devices_size(), 1);
  EXPECT_EQ(devices.devices(0).id(), "cpu:0");
  EXPECT_EQ(devices.devices(0).fingerprint().vendor(), "cpu");
  EXPECT_FALSE(devices.devices(0).fingerprint().device_class().empty());
  bool saw_cuda = false;
  for (const auto& b : devices.backends()) {
    if (b.name() == "host") {
      EXPECT_TRUE(b.available());
    }
    if (b.name() == "cuda") {
      saw_cuda = true;
      EXPECT_FALSE(b.reason().empty());
    }
  }
  EXPECT_TRUE(saw_cuda);

  auto metrics = HttpGet(daemon.metrics_address(), "/metrics");
  ASSERT_TRUE(metrics);
  EXPECT_NE(metrics->find("tiletune_lookups_total"), std::string::npos);
  EXPECT_NE(metrics->find("tiletune_jobs"), std::string::npos);

  EXPECT_EQ(daemon.Stop(SIGTERM), 0) << daemon.log();
  EXPECT_NE(daemon.log().find("stopped cleanly"), std::string::npos) << daemon.log();
  auto after = RunCommand(
      {BinaryPath("tiletune"), "--server", daemon.address(), "--timeout", "1", "health"});
  EXPECT_EQ(after.exit_code, 3);
}

TEST(DaemonLifecycle, RefusesBadConfigWithOneLine) {
  auto result = RunCommand({BinaryPath("tiletuned"), "--max-dim", "-5"});
  EXPECT_EQ(result.exit_code, 2);
  EXPECT_NE(result.err.find("max_dim must be positive"), std::string::npos) << result.err;
  result = RunCommand({BinaryPath("tiletuned"), "--compile-threads", "many"});
  EXPECT_EQ(result.exit_code, 2);
  EXPECT_NE(result.err.find("--compile-threads"), std::string::npos) << result.err;
}

TEST(DaemonLifecycle, ASecondDaemonOnAPortInUseExitsNamingTheAddress) {
  TempDir dir;
  std::filesystem::create_directories(dir.path() / "first");
  TiletunedProcess first(dir.path() / "first");  // on port 0
  first.Start();
  ASSERT_FALSE(first.address().empty());

  auto second = RunCommand({BinaryPath("tiletuned"), "--data-dir", (dir.path() / "second").string(),
                            "--listen", first.address(), "--metrics-listen", ""},
                           30s);
  EXPECT_NE(second.exit_code, 0) << second.err;
  const std::string in_use = first.address() + " is in use";
  const auto at = second.err.find(in_use);
  EXPECT_NE(at, std::string::npos) << second.err;
  EXPECT_EQ(second.err.find(in_use, at + 1), std::string::npos) << "said more than once";

  auto health = RunCommand({BinaryPath("tiletune"), "--server", first.address(), "health"});
  EXPECT_EQ(health.exit_code, 0) << health.err;
  EXPECT_EQ(first.Stop(SIGTERM), 0) << first.log();
}

// A second daemon given a running one's Unix socket refuses it and leaves
// it be; a socket file no one answers on (a killed daemon's) is taken over.
TEST(DaemonLifecycle, ASecondDaemonLeavesARunningDaemonsUnixSocketAlone) {
  TempDir dir;
  std::filesystem::create_directories(dir.path() / "first");
  const std::string socket = (dir.path() / "tiletuned.sock").string();
  TiletunedProcess first(dir.path() / "first", {"--listen-unix", socket});
  first.Start();
  auto second =
      RunCommand({BinaryPath("tiletuned"), "--data-dir", (dir.path() / "second").string(),
                  "--listen", "127.0.0.1:0", "--metrics-listen", "", "--listen-unix", socket},
                 30s);
  EXPECT_NE(second.exit_code, 0) << second.err;
  EXPECT_NE(second.err.find(socket + " is in use"), std::string::npos) << second.err;
  auto health = RunCommand({BinaryPath("tiletune"), "--server", "unix:" + socket, "health"});
  EXPECT_EQ(health.exit_code, 0) << health.err;
  EXPECT_EQ(first.Stop(SIGKILL), 128 + SIGKILL);
  ASSERT_TRUE(std::filesystem::exists(socket)) << "a killed daemon leaves its socket file";

  std::filesystem::create_directories(dir.path() / "third");
  TiletunedProcess third(dir.path() / "third", {"--listen-unix", socket});
  third.Start();
  health = RunCommand({BinaryPath("tiletune"), "--server", "unix:" + socket, "health"});
  EXPECT_EQ(health.exit_code, 0) << health.err;
  EXPECT_EQ(third.Stop(SIGTERM), 0) << third.log();
}

TEST(DaemonLifecycle, ListenReusePortLetsDaemonsThatAllowItShareAPort) {
  TempDir dir;
  std::filesystem::create_directories(dir.path() / "first");
  std::filesystem::create_directories(dir.path() / "second");
  TiletunedProcess first(dir.path() / "first", {"--listen-reuse-port", "true"});
  first.Start();
  TiletunedProcess second(dir.path() / "second",
                          {"--listen", first.address(), "--listen-reuse-port", "true"});
  second.Start();
  EXPECT_EQ(second.address(), first.address());
  EXPECT_EQ(second.Stop(SIGTERM), 0) << second.log();
  EXPECT_EQ(first.Stop(SIGTERM), 0) << first.log();
}

TEST(DaemonLifecycle, KillNineMidJobResumesAndKeepsRecords) {
  TempDir dir;
  TiletunedProcess daemon(dir.path());
  daemon.Start();
  auto stub = daemon.Stub();

  v1::SubmitJobRequest submit;
  auto* spec = submit.mutable_spec();
  spec->set_strategy(v1::STRATEGY_RANDOM);
  spec->set_seed(3);
  spec->mutable_budget()->set_max_variants(4);
  *spec->add_kernels() = RowKey("softmax", 64, 300);
  *spec->add_kernels() = GemmKey(96, 80, 72, {"bias"});
  *spec->add_kernels() = RowKey("rmsnorm", 64, 500);
  v1::SubmitJobResponse submitted;
  {
    grpc::ClientContext ctx;
    ASSERT_TRUE(stub->SubmitJob(&ctx, submit, &submitted).ok());
  }
  const std::string id = submitted.job_id();
  // Kill once the first item is done and the second has started.
  WaitForJob(*stub, id, [](const v1::Job& job) {
    return job.items(0).state() == v1::JOB_SUCCEEDED && job.items(1).compiled() > 0;
  });
  EXPECT_EQ(daemon.Stop(SIGKILL), 128 + SIGKILL);

  {
    auto store = db::OpenSqliteStore({daemon.db_path().string()});
    EXPECT_EQ(store->IntegrityCheck(), "ok");
    auto job = store->GetJob(id);
    ASSERT_TRUE(job);
    EXPECT_EQ(job->items(0).state(), v1::JOB_SUCCEEDED);
    EXPECT_EQ(job->items(1).state(), v1::JOB_RUNNING);
  }

  daemon.Start();
  stub = daemon.Stub();
  auto job = WaitForJob(*stub, id);
  EXPECT_EQ(job.state(), v1::JOB_SUCCEEDED) << job.ShortDebugString();
  EXPECT_NE(daemon.log().find("resuming 1 interrupted job item"), std::string::npos);
  // The resumed item did not try more variants than its budget.
  EXPECT_LE(job.items(1).compiled() + job.items(1).failed(), 4 + 1);

  grpc::ClientContext ctx;
  v1::ListRecordsRequest list;
  v1::ListRecordsResponse records;
  ASSERT_TRUE(stub->ListRecords(&ctx, list, &records).ok());
  EXPECT_EQ(records.records_size(), 3);
  EXPECT_EQ(daemon.Stop(SIGTERM), 0);
  auto store = db::OpenSqliteStore({daemon.db_path().string()});
  EXPECT_EQ(store->IntegrityCheck(), "ok");
}

}  // namespace
}  // namespace tiletune::testing
