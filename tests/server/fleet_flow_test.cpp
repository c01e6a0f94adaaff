// Fleet mode end to end: three real daemons share a PostgreSQL database; two
// have one host device class (host_cpus 1), the third another (host_cpus 2).
// Jobs queue per device class: every item runs exactly once, on a daemon of
// its class, and every daemon lists the whole fleet.
#include <gtest/gtest.h>
#include <signal.h>

#include <future>
#include <map>
#include <set>
#include <thread>

#include "runtime/host/cpu_fingerprint.h"
#include "tests/support/postgres_test_database.h"
#include "tests/support/tiletuned_process.h"

namespace tiletune::testing {
namespace {

using namespace std::chrono_literals;

v1::ListDevicesResponse ListDevices(const TiletunedProcess& daemon) {
  grpc::ClientContext ctx;
  v1::ListDevicesResponse response;
  const auto status = daemon.Stub()->ListDevices(&ctx, v1::ListDevicesRequest(), &response);
  EXPECT_TRUE(status.ok()) << status.error_message();
  return response;
}

grpc::Status Submit(const TiletunedProcess& daemon, const v1::JobSpec& spec, std::string* id) {
  grpc::ClientContext ctx;
  v1::SubmitJobRequest request;
  *request.mutable_spec() = spec;
  v1::SubmitJobResponse response;
  auto status = daemon.Stub()->SubmitJob(&ctx, request, &response);
  *id = response.job_id();
  return status;
}

v1::Job Get(const TiletunedProcess& daemon, const std::string& id) {
  grpc::ClientContext ctx;
  v1::GetJobRequest request;
  request.set_job_id(id);
  v1::Job job;
  EXPECT_TRUE(daemon.Stub()->GetJob(&ctx, request, &job).ok());
  return job;
}

// The last event of a WatchJob stream.
v1::JobEvent LastEventOfWatch(const TiletunedProcess& daemon, const std::string& id) {
  grpc::ClientContext ctx;
  ctx.set_deadline(std::chrono::system_clock::now() + 120s);
  v1::WatchJobRequest request;
  request.set_job_id(id);
  auto reader = daemon.Stub()->WatchJob(&ctx, request);
  v1::JobEvent event, last;
  while (reader->Read(&event)) last = event;
  const auto status = reader->Finish();
  EXPECT_TRUE(status.ok()) << status.error_message();
  return last;
}

// Tiny host jobs: two variants per item.
v1::JobSpec TinyJob(const std::string& device_class, std::vector<v1::KernelKey> keys) {
  v1::JobSpec spec;
  spec.set_strategy(v1::STRATEGY_RANDOM);
  spec.set_seed(3);
  spec.mutable_budget()->set_max_variants(2);
  spec.mutable_device()->set_device_class(device_class);
  for (auto& key : keys) *spec.add_kernels() = std::move(key);
  return spec;
}

class FleetFlow : public ::testing::Test {
 protected:
  void SetUp() override {
    auto admin = PostgresAdminUrl();
    if (!admin) GTEST_SKIP() << kNoPostgresCluster;
    if (runtime::host::UsableCpuCount() < 2) {
      GTEST_SKIP() << "two host device classes need 2 usable CPUs (host_cpus 1 and 2)";
    }
    database_.emplace(*admin);
  }

  // A daemon of the fleet named `id`, whose host device has `cpus` CPUs.
  TiletunedProcess& AddDaemon(const std::string& id, int cpus) {
    std::filesystem::create_directories(dir_.path() / id);
    daemons_[id] = std::make_unique<TiletunedProcess>(
        dir_.path() / id,
        std::vector<std::string>{"--db", database_->url(), "--daemon-id", id, "--host-cpus",
                                 std::to_string(cpus), "--fleet-heartbeat-seconds", "0.2",
                                 "--fleet-gone-after-seconds", "3"});
    daemons_[id]->Start();
    return *daemons_[id];
  }

  static std::string ClassOf(const TiletunedProcess& daemon) {
    const auto response = ListDevices(daemon);
    EXPECT_EQ(response.devices_size(), 1);
    return response.devices(0).fingerprint().device_class();
  }

  TempDir dir_;
  std::optional<PostgresTestDatabase> database_;
  std::map<std::string, std::unique_ptr<TiletunedProcess>> daemons_;
};

TEST_F(FleetFlow, JobsRunOnceOnADaemonOfTheirClassAndEveryDaemonListsTheFleet) {
  auto& a = AddDaemon("a", 1);
  auto& b = AddDaemon("b", 1);
  auto& c = AddDaemon("c", 2);
  const std::string shared = ClassOf(a);
  const std::string other = ClassOf(c);
  ASSERT_EQ(ClassOf(b), shared);
  ASSERT_NE(other, shared);

  // The queue is the class, and a class only other daemons have is taken.
  std::map<std::string, std::string> class_of_job;
  std::string id;
  ASSERT_TRUE(Submit(c, TinyJob(shared, {GemmKey(24, 16, 8), RowKey("softmax", 8, 64)}), &id).ok());
  class_of_job[id] = shared;
  ASSERT_TRUE(Submit(a, TinyJob(other, {GemmKey(16, 24, 8), RowKey("softmax", 8, 96)}), &id).ok());
  class_of_job[id] = other;
  // Only c can run it; a, where it was submitted, is watched from now on.
  auto watched_on_a = std::async(std::launch::async, [&a, id] { return LastEventOfWatch(a, id); });
  ASSERT_TRUE(Submit(b, TinyJob("", {GemmKey(8, 16, 24), GemmKey(24, 8, 16)}), &id).ok());
  class_of_job[id] = shared;

  const auto refused = Submit(a, TinyJob("no-such-class", {GemmKey(8, 8, 8)}), &id);
  EXPECT_EQ(refused.error_code(), grpc::StatusCode::INVALID_ARGUMENT);
  EXPECT_NE(refused.error_message().find("spec.device.device_class"), std::string::npos)
      << refused.error_message();

  for (const auto& [job_id, device_class] : class_of_job) {
    v1::Job job;
    const auto until = std::chrono::steady_clock::now() + 120s;
    do {
      std::this_thread::sleep_for(100ms);
      job = Get(a, job_id);
    } while ((job.state() == v1::JOB_QUEUED || job.state() == v1::JOB_RUNNING) &&
             std::chrono::steady_clock::now() < until);
    ASSERT_EQ(job.state(), v1::JOB_SUCCEEDED) << job.ShortDebugString();
    EXPECT_EQ(job.device(), device_class);
  }

  // Its events stayed on c, yet the watch on a saw it end.
  EXPECT_EQ(watched_on_a.get().kind(), v1::JobEvent::KIND_JOB_FINISHED);

  // Each item was claimed once (one lease drawn per claim) by a daemon of
  // its class, and every trial was measured on that class.
  EXPECT_EQ(database_->Query("SELECT count(*) FROM job_items"), "6");
  EXPECT_EQ(database_->Query("SELECT last_value FROM item_leases"), "6");
  EXPECT_EQ(database_->Query("SELECT count(*) FROM job_items i JOIN jobs j ON j.id = i.job_id"
                             " WHERE j.device = '" +
                             shared + "' AND i.owner NOT IN ('a', 'b')"),
            "0");
  EXPECT_EQ(database_->Query("SELECT count(*) FROM job_items i JOIN jobs j ON j.id = i.job_id"
                             " WHERE j.device = '" +
                             other + "' AND i.owner <> 'c'"),
            "0");
  EXPECT_EQ(database_->Query("SELECT count(*) FROM trials t JOIN jobs j ON j.id = t.job_id"
                             " WHERE t.device_class <> j.device"),
            "0");
  EXPECT_NE(database_->Query("SELECT count(*) FROM trials"), "0");
  // No variant of an item was measured twice.
  EXPECT_EQ(database_->Query("SELECT count(*) FROM (SELECT job_id, item_index, params"
                             " FROM trials GROUP BY 1, 2, 3 HAVING count(*) > 1) twice"),
            "0");

  for (const auto* daemon : {&a, &b, &c}) {
    const auto response = ListDevices(*daemon);
    ASSERT_EQ(response.fleet_size(), 3);
    std::map<std::string, std::string> classes;
    for (const auto& d : response.fleet()) {
      EXPECT_FALSE(d.gone()) << d.ShortDebugString();
      EXPECT_LT(d.heartbeat_age_seconds(), 3);
      ASSERT_EQ(d.devices_size(), 1);
      classes[d.daemon_id()] = d.devices(0).fingerprint().device_class();
    }
    EXPECT_EQ(classes,
              (std::map<std::string, std::string>{{"a", shared}, {"b", shared}, {"c", other}}));
    EXPECT_EQ(response.fleet(0).address(), a.address());
  }
}

TEST_F(FleetFlow, AStoppedDaemonIsShownGoneAndItsClassNoLongerServed) {
  auto& a = AddDaemon("a", 1);
  auto& c = AddDaemon("c", 2);
  const std::string other = ClassOf(c);
  EXPECT_EQ(c.Stop(SIGTERM), 0);
  std::this_thread::sleep_for(3500ms);

  const auto response = ListDevices(a);
  ASSERT_EQ(response.fleet_size(), 2);
  EXPECT_FALSE(response.fleet(0).gone());
  EXPECT_TRUE(response.fleet(1).gone());
  EXPECT_GT(response.fleet(1).heartbeat_age_seconds(), 3);

  std::string id;
  const auto refused = Submit(a, TinyJob(other, {GemmKey(8, 8, 8)}), &id);
  EXPECT_EQ(refused.error_code(), grpc::StatusCode::INVALID_ARGUMENT);

  const auto cli = RunCommand({BinaryPath("tiletune"), "--server", a.address(), "devices"});
  EXPECT_EQ(cli.exit_code, 0) << cli.err;
  EXPECT_NE(cli.out.find("fleet"), std::string::npos) << cli.out;
  EXPECT_NE(cli.out.find("gone"), std::string::npos) << cli.out;
  EXPECT_NE(cli.out.find(other), std::string::npos) << cli.out;
}

// One node (SQLite): jobs queue per device id as before, the fleet is this
// daemon alone, and a class it lacks is refused.
TEST(FleetOnOneNode, JobsQueuePerDeviceAndTheFleetIsThisDaemon) {
  TempDir dir;
  TiletunedProcess daemon(dir.path(), {"--daemon-id", "solo"});
  daemon.Start();
  std::string id;
  ASSERT_TRUE(Submit(daemon, TinyJob("", {GemmKey(8, 8, 8)}), &id).ok());
  EXPECT_EQ(Get(daemon, id).device(), "cpu:0");
  const auto refused = Submit(daemon, TinyJob("no-such-class", {GemmKey(8, 8, 8)}), &id);
  EXPECT_EQ(refused.error_code(), grpc::StatusCode::INVALID_ARGUMENT);
  EXPECT_NE(refused.error_message().find("spec.device.device_class"), std::string::npos);

  const auto response = ListDevices(daemon);
  ASSERT_EQ(response.fleet_size(), 1);
  EXPECT_EQ(response.fleet(0).daemon_id(), "solo");
  EXPECT_EQ(response.fleet(0).address(), daemon.address());
  ASSERT_EQ(response.fleet(0).devices_size(), 1);
  EXPECT_EQ(response.fleet(0).devices(0).id(), "cpu:0");
}

}  // namespace
}  // namespace tiletune::testing
