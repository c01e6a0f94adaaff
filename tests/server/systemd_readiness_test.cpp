// tiletuned under a stand-in for systemd's Type=notify: READY=1 once it
// serves, WATCHDOG=1 while it does, STOPPING=1 when it drains.
#include <gtest/gtest.h>
#include <signal.h>
#include <stdlib.h>

#include <thread>

#include "tests/support/notify_socket.h"
#include "tests/support/poll_until.h"
#include "tests/support/tiletuned_process.h"

namespace tiletune::testing {
namespace {

using namespace std::chrono_literals;

TEST(SystemdReadiness, DaemonNotifiesReadyWatchdogAndStopping) {
  TempDir dir;
  TempDir socket_dir;
  NotifySocket socket((socket_dir.path() / "notify").string());
  // The daemon inherits these; the test runs them one at a time.
  setenv("NOTIFY_SOCKET", socket.path().c_str(), 1);
  setenv("WATCHDOG_USEC", "400000", 1);
  TiletunedProcess daemon(dir.path());
  daemon.Start();
  unsetenv("NOTIFY_SOCKET");
  unsetenv("WATCHDOG_USEC");

  auto ready = socket.ReceiveContaining("READY=1", kEventCeiling);
  ASSERT_TRUE(ready) << daemon.log();
  EXPECT_NE(ready->find("STATUS=serving on " + daemon.address()), std::string::npos) << *ready;
  EXPECT_TRUE(socket.ReceiveContaining("WATCHDOG=1", kEventCeiling));
  EXPECT_EQ(daemon.Stop(SIGTERM), 0);
  EXPECT_TRUE(socket.ReceiveContaining("STOPPING=1", kEventCeiling));
}

// What the Kubernetes probes ask: the daemon as a whole turns NOT_SERVING
// the moment it drains (readiness), "liveness" stays SERVING until it exits.
TEST(HealthProbes, DrainingIsNotReadyButStillAlive) {
  TempDir dir;
  // The running item holds the drain open until the test cancels its job.
  TiletunedProcess daemon(dir.path(), {"--drain-timeout-seconds", "300"});
  daemon.Start();
  auto stub = daemon.Stub();
  grpc::ClientContext ctx;
  v1::SubmitJobRequest submit;
  submit.mutable_spec()->mutable_budget()->set_max_variants(200);
  submit.mutable_spec()->mutable_budget()->set_max_seconds(3600);
  *submit.mutable_spec()->add_kernels() = RowKey("softmax", 4096, 4096);
  v1::SubmitJobResponse submitted;
  ASSERT_TRUE(stub->SubmitJob(&ctx, submit, &submitted).ok());
  auto health = [&](const std::string& service) {
    return RunCommand({BinaryPath("tiletune"), "--server", daemon.address(), "--timeout", "60",
                       "health", "--service", service})
        .exit_code;
  };
  EXPECT_EQ(health("liveness"), 0);
  EXPECT_EQ(health(""), 0);

  int stopped = -1;
  std::thread stop([&] { stopped = daemon.Stop(SIGTERM, kEventCeiling); });
  EXPECT_TRUE(PollUntil([&] { return health("") != 0; }, In(kEventCeiling), 50ms));
  EXPECT_EQ(health(""), 1) << "draining daemon still SERVING";
  EXPECT_EQ(health("liveness"), 0) << "draining daemon reported dead";
  grpc::ClientContext cancel_ctx;
  v1::CancelJobRequest cancel;
  cancel.set_job_id(submitted.job_id());
  v1::Job cancelled;
  EXPECT_TRUE(stub->CancelJob(&cancel_ctx, cancel, &cancelled).ok());
  stop.join();
  EXPECT_EQ(stopped, 0);
}

}  // namespace
}  // namespace tiletune::testing
