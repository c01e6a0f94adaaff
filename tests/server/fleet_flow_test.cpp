// Fleet mode end to end: three real daemons share a PostgreSQL database; two
// have one host device class (host_cpus 1), the third another (host_cpus 2).
// Jobs queue per device class: every item runs exactly once, on a daemon of
// its class, and every daemon lists the whole fleet.
#include <google/protobuf/util/message_differencer.h>
#include <gtest/gtest.h>
#include <signal.h>

#include <fstream>
#include <future>
#include <map>
#include <set>
#include <sstream>
#include <thread>

#include "db/tuning_store.h"
#include "runtime/host/cpu_fingerprint.h"
#include "tests/support/daemon_calls.h"
#include "tests/support/poll_until.h"
#include "tests/support/postgres_test_database.h"
#include "tests/support/prometheus_scrape.h"
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

// The last event of a WatchJob stream.
v1::JobEvent LastEventOfWatch(const TiletunedProcess& daemon, const std::string& id) {
  const auto events = WatchJobToEnd(*daemon.Stub(), id);
  return events.empty() ? v1::JobEvent() : events.back();
}

v1::LookupResponse Lookup(const TiletunedProcess& daemon, const v1::KernelKey& key,
                          grpc::Status* status) {
  grpc::ClientContext ctx;
  v1::LookupRequest request;
  *request.mutable_key() = key;
  v1::LookupResponse response;
  *status = daemon.Stub()->Lookup(&ctx, request, &response);
  return response;
}

// `tiletune health --service SERVICE` against `daemon`: its exit code.
int HealthOf(const TiletunedProcess& daemon, const std::string& service) {
  return RunCommand({BinaryPath("tiletune"), "--server", daemon.address(), "--timeout", "60",
                     "health", "--service", service})
      .exit_code;
}

// Polls `health` until it answers `exit_code`.
bool HealthBecomes(const TiletunedProcess& daemon, const std::string& service, int exit_code) {
  return PollUntil([&] { return HealthOf(daemon, service) == exit_code; }, In(kEventCeiling),
                   100ms);
}

constexpr const char* kMutations = "tiletune.v1.TuningService.mutations";

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
  // Planned where it was submitted, on the device c announced: the job's
  // total is known from the start, as c will plan it.
  const v1::Job planned_on_a = GetJob(*a.Stub(), id);
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
    PollUntil(
        [&] {
          job = GetJob(*a.Stub(), job_id);
          return job.state() != v1::JOB_QUEUED && job.state() != v1::JOB_RUNNING;
        },
        In(kEventCeiling), 100ms);
    ASSERT_EQ(job.state(), v1::JOB_SUCCEEDED) << job.ShortDebugString();
    EXPECT_EQ(job.device(), device_class);
  }

  // Its events stayed on c, yet the watch on a saw it end.
  EXPECT_EQ(watched_on_a.get().kind(), v1::JobEvent::KIND_JOB_FINISHED);
  const v1::Job run_on_c = GetJob(*a.Stub(), planned_on_a.id());
  ASSERT_EQ(run_on_c.items_size(), planned_on_a.items_size());
  for (int i = 0; i < run_on_c.items_size(); ++i) {
    EXPECT_GT(planned_on_a.items(i).variants_planned(), 0) << planned_on_a.ShortDebugString();
    EXPECT_EQ(planned_on_a.items(i).variants_planned(), run_on_c.items(i).variants_planned());
  }

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
  v1::ListDevicesResponse response;
  PollUntil(
      [&] {
        response = ListDevices(a);
        return response.fleet_size() == 2 && response.fleet(1).gone();
      },
      In(kEventCeiling), 100ms);
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

// A lookup names a class only another daemon has: with tune_on_miss the job
// is queued for that class, runs there, and the record is then served by
// the daemon that was asked.
TEST_F(FleetFlow, TuneOnMissForAClassOnlyAnotherDaemonHasRunsThere) {
  auto& a = AddDaemon("a", 1);
  auto& c = AddDaemon("c", 2);
  const std::string other = ClassOf(c);
  const auto key = RowKey("softmax", 8, 80);
  grpc::ClientContext ctx;
  v1::LookupRequest request;
  *request.mutable_key() = key;
  request.mutable_device()->set_device_class(other);
  request.set_tune_on_miss(true);
  v1::LookupResponse miss;
  ASSERT_TRUE(a.Stub()->Lookup(&ctx, request, &miss).ok());
  EXPECT_EQ(miss.result(), v1::LookupResponse::RESULT_MISS);
  ASSERT_FALSE(miss.job_id().empty()) << miss.fallback().reason();

  const auto finished = LastEventOfWatch(a, miss.job_id());
  EXPECT_EQ(finished.job().state(), v1::JOB_SUCCEEDED) << finished.ShortDebugString();
  EXPECT_EQ(finished.job().device(), other);
  EXPECT_EQ(database_->Query("SELECT owner FROM job_items WHERE job_id = '" + miss.job_id() + "'"),
            "c");
  // The miss a cached is dropped by c's commit: a serves the record.
  request.set_tune_on_miss(false);
  v1::LookupResponse answer;
  PollUntil(
      [&] {
        grpc::ClientContext again;
        const auto status = a.Stub()->Lookup(&again, request, &answer);
        EXPECT_TRUE(status.ok()) << status.error_message();
        return !status.ok() || answer.has_record();
      },
      In(kEventCeiling), 50ms);
  EXPECT_TRUE(answer.has_record());
  EXPECT_EQ(answer.record().device_class(), other);
}

// The database goes away under a running daemon (its connections are
// terminated and new ones refused, as a server restart or a partition
// would): lookups keep being answered from the cache, calls that need the
// database are refused at once and named as such, /metrics still answers,
// and all of it recovers when the database is back.
TEST_F(FleetFlow, ALostDatabaseLeavesLookupsOnTheCacheAndRefusesOnlyWhatNeedsIt) {
  auto& a = AddDaemon("a", 1);
  const auto key = GemmKey(24, 16, 8);
  std::string id;
  ASSERT_TRUE(Submit(a, TinyJob("", {key}), &id).ok());
  ASSERT_EQ(LastEventOfWatch(a, id).job().state(), v1::JOB_SUCCEEDED);
  grpc::Status status;
  const auto before = Lookup(a, key, &status);
  ASSERT_TRUE(status.ok()) << status.error_message();
  ASSERT_TRUE(before.has_record());
  EXPECT_EQ(HealthOf(a, kMutations), 0);

  const auto admin = *PostgresAdminUrl();
  const std::string name = database_->name();
  QueryPostgres(admin, "ALTER DATABASE \"" + name + "\" ALLOW_CONNECTIONS false");
  QueryPostgres(admin,
                "SELECT count(pg_terminate_backend(pid)) FROM pg_stat_activity WHERE datname = '" +
                    name + "'");
  ASSERT_TRUE(HealthBecomes(a, kMutations, 1)) << a.log();

  // The daemon as a whole still serves: lookups are its job.
  EXPECT_EQ(HealthOf(a, ""), 0);
  EXPECT_EQ(HealthOf(a, "tiletune.v1.TuningService"), 0);
  const auto cached = Lookup(a, key, &status);
  ASSERT_TRUE(status.ok()) << status.error_message();
  EXPECT_EQ(cached.result(), before.result());
  EXPECT_TRUE(google::protobuf::util::MessageDifferencer::Equals(cached.record(), before.record()));
  const auto unknown = Lookup(a, GemmKey(40, 8, 8), &status);
  ASSERT_TRUE(status.ok()) << status.error_message();
  EXPECT_EQ(unknown.result(), v1::LookupResponse::RESULT_MISS);
  EXPECT_NE(unknown.fallback().reason().find("unreachable"), std::string::npos)
      << unknown.fallback().reason();

  const auto refused = Submit(a, TinyJob("", {GemmKey(8, 8, 8)}), &id);
  EXPECT_EQ(refused.error_code(), grpc::StatusCode::UNAVAILABLE);
  EXPECT_NE(refused.error_message().find("tuning database is unreachable"), std::string::npos)
      << refused.error_message();
  const auto cli = RunCommand({BinaryPath("tiletune"), "--server", a.address(), "jobs", "list"});
  EXPECT_NE(cli.exit_code, 0);
  EXPECT_NE(cli.err.find("unreachable"), std::string::npos) << cli.err;

  const auto devices = ListDevices(a);
  EXPECT_EQ(devices.fleet_size(), 0);
  EXPECT_NE(devices.fleet_unknown().find("unreachable"), std::string::npos);
  EXPECT_EQ(devices.daemon(), "a");
  const auto metrics = HttpGet(a.metrics_address(), "/metrics");
  ASSERT_TRUE(metrics);
  EXPECT_NE(metrics->find("tiletune_database_reachable 0"), std::string::npos) << *metrics;

  QueryPostgres(admin, "ALTER DATABASE \"" + name + "\" ALLOW_CONNECTIONS true");
  ASSERT_TRUE(HealthBecomes(a, kMutations, 0)) << a.log();
  ASSERT_TRUE(Submit(a, TinyJob("", {GemmKey(8, 8, 8)}), &id).ok());
  EXPECT_EQ(LastEventOfWatch(a, id).job().state(), v1::JOB_SUCCEEDED);
  const auto after = HttpGet(a.metrics_address(), "/metrics");
  ASSERT_TRUE(after);
  EXPECT_NE(after->find("tiletune_database_reachable 1"), std::string::npos);
  // The outage is two log lines, not one per call or claim.
  const std::string log = a.log();
  size_t lost = 0;
  for (size_t at = log.find("tuning database unreachable"); at != std::string::npos;
       at = log.find("tuning database unreachable", at + 1)) {
    ++lost;
  }
  EXPECT_EQ(lost, 1u) << log;
  EXPECT_NE(log.find("tuning database reachable again"), std::string::npos);
}

// Orchestrators start the database and the daemons in any order: a daemon
// whose database does not answer yet waits for it instead of exiting.
TEST_F(FleetFlow, ADaemonStartedBeforeItsDatabaseServesOnceItAnswers) {
  const auto admin = *PostgresAdminUrl();
  const std::string name = database_->name();
  QueryPostgres(admin, "ALTER DATABASE \"" + name + "\" ALLOW_CONNECTIONS false");
  // Opened once the daemon has said that it waits for it.
  auto opened = std::async(std::launch::async, [&] {
    const auto log = dir_.path() / "a" / "tiletuned.log";
    PollUntil(
        [&] {
          std::ifstream in(log);
          std::stringstream text;
          text << in.rdbuf();
          return text.str().find("trying again in") != std::string::npos;
        },
        In(kEventCeiling), 50ms);
    QueryPostgres(admin, "ALTER DATABASE \"" + name + "\" ALLOW_CONNECTIONS true");
  });
  auto& a = AddDaemon("a", 1);
  opened.get();
  EXPECT_NE(a.log().find("trying again in"), std::string::npos) << a.log();
  std::string id;
  ASSERT_TRUE(Submit(a, TinyJob("", {GemmKey(8, 8, 8)}), &id).ok());
  EXPECT_EQ(LastEventOfWatch(a, id).job().state(), v1::JOB_SUCCEEDED);
}

// Two daemons that start together both find a job whose items all
// finished while the job stayed RUNNING (its daemon died between the two
// writes): both finish it, and the fleet counts it once. A transaction of
// the test's holds the job's row until both wait on it, so that both have
// read it RUNNING.
TEST_F(FleetFlow, AJobTwoDaemonsFinishAtOnceIsCountedOnce) {
  {
    auto store = db::OpenPostgresStore({.url = database_->url(), .owner = "gone"});
    v1::Job job;
    job.set_id("left-running");
    job.set_device("a-class-no-daemon-has");
    *job.mutable_spec()->add_kernels() = RowKey("softmax", 8, 64);
    store->CreateJob(job, {"left-running/0"});
    const auto claim = store->ClaimNextItem("a-class-no-daemon-has");
    ASSERT_TRUE(claim);
    v1::JobItemProgress progress;
    progress.set_index(claim->item_index);
    progress.set_state(v1::JOB_SUCCEEDED);
    store->UpdateItem(claim->job_id, progress, claim->lease);
  }
  PostgresSession holder(database_->url());
  holder.Query("BEGIN");
  holder.Query("SELECT id FROM jobs WHERE id = 'left-running' FOR UPDATE");
  std::vector<std::unique_ptr<TiletunedProcess>> daemons;
  std::vector<std::future<void>> started;
  for (const std::string id : {"a", "b"}) {
    std::filesystem::create_directories(dir_.path() / id);
    daemons.push_back(std::make_unique<TiletunedProcess>(
        dir_.path() / id,
        std::vector<std::string>{"--db", database_->url(), "--daemon-id", id, "--host-cpus", "1"}));
    started.push_back(
        std::async(std::launch::async, [&daemon = *daemons.back()] { daemon.Start(); }));
  }
  EXPECT_TRUE(PollUntil(
      [&] {
        return database_->Query(
                   "SELECT count(*) FROM pg_stat_activity WHERE datname ="
                   " current_database() AND wait_event_type = 'Lock'") == "2";
      },
      In(kEventCeiling), 50ms));
  holder.Query("COMMIT");
  for (auto& start : started) start.get();

  EXPECT_EQ(GetJob(*daemons[0]->Stub(), "left-running").state(), v1::JOB_SUCCEEDED);
  double counted = 0;
  for (const auto& daemon : daemons) {
    const auto page = HttpGet(daemon->metrics_address(), "/metrics");
    ASSERT_TRUE(page);
    const std::string value =
        ParseScrape(*page).Value("tiletune_jobs_finished_total", {{"state", "succeeded"}});
    ASSERT_FALSE(value.empty()) << *page;
    counted += std::stod(value);
  }
  EXPECT_EQ(counted, 1);
}

// One node (SQLite): jobs queue per device id as before, the fleet is this
// daemon alone, and a class it lacks is refused.
TEST(FleetOnOneNode, JobsQueuePerDeviceAndTheFleetIsThisDaemon) {
  TempDir dir;
  TiletunedProcess daemon(dir.path(), {"--daemon-id", "solo"});
  daemon.Start();
  std::string id;
  ASSERT_TRUE(Submit(daemon, TinyJob("", {GemmKey(8, 8, 8)}), &id).ok());
  EXPECT_EQ(GetJob(*daemon.Stub(), id).device(), "cpu:0");
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
