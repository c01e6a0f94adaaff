// The lookup policy without gRPC: a real SQLite store in a temporary
// folder, the real LookupCache, MissCounter and host device, and the
// LookupResolver that the Lookup and BatchLookup RPCs call.
#include "server/lookup_resolver.h"

#include <gtest/gtest.h>

#include <memory>
#include <set>
#include <string>

#include "kernels/core/kernel_key.h"
#include "runtime/backend_registry.h"
#include "tests/support/tiletuned_process.h"

namespace tiletune::server {
namespace {

using testing::GemmKey;
using testing::TempDir;

class LookupResolverTest : public ::testing::Test {
 protected:
  explicit LookupResolverTest(JobQueues queues = JobQueues::kPerDevice)
      : devices_(runtime::DiscoverBackends(
                     {.enabled = {"host"}, .cache_dir = (dir_.path() / "cache").string()}),
                 {}, queues),
        store_(db::OpenSqliteStore({.path = (dir_.path() / "tiletune.db").string()})) {
    context_.store = store_.get();
  }

  void SetUp() override { ASSERT_FALSE(devices_.devices().empty()) << "no host device"; }

  const ManagedDevice& device() const { return *devices_.devices().front(); }
  std::string device_class() const { return device().info.fingerprint.device_class(); }

  // A tuned record for `key` on this daemon's device, measured with its
  // toolchain (not stale).
  v1::Record TunedRecord(const v1::KernelKey& key, double tuned_us) const {
    v1::Record record;
    *record.mutable_key() = kernels::NormalizeKernelKey(key);
    record.set_device_class(device_class());
    *record.mutable_toolchain() = device().info.toolchain;
    record.set_winner(v1::WINNER_TUNED);
    record.mutable_tuned()->set_median_us(tuned_us);
    record.mutable_baseline()->set_median_us(2 * tuned_us);
    record.mutable_measured_at()->set_seconds(1700000000);
    return record;
  }

  v1::LookupResponse Lookup(const v1::KernelKey& key, bool tune_on_miss = false,
                            const std::string& device_class = "") {
    v1::LookupRequest request;
    *request.mutable_key() = key;
    request.set_tune_on_miss(tune_on_miss);
    request.mutable_device()->set_device_class(device_class);
    v1::LookupResponse response;
    auto error = resolver_.Resolve(request, response);
    EXPECT_FALSE(error) << error->ToString();
    return response;
  }

  std::vector<v1::Job> Jobs() { return store_->ListJobs({}, 100, "").jobs; }

  TempDir dir_;
  DaemonConfig config_;
  DeviceRegistry devices_;
  MetricsRegistry registry_;
  DaemonMetrics metrics_{registry_};
  LookupCache cache_{1000};
  JobEventHub events_;
  DatabaseHealth database_;
  std::unique_ptr<db::TuningStore> store_;
  ServiceContext context_{config_, devices_, cache_, events_, metrics_, database_};
  LookupResolver resolver_{context_};
};

TEST_F(LookupResolverTest, HitsFromTheStoreThenFromTheCacheItFilled) {
  const auto key = GemmKey(64, 64, 64);
  const auto canonical = kernels::CanonicalKeyString(key);
  store_->PutRecord(canonical, TunedRecord(key, 10));

  auto first = Lookup(key);
  EXPECT_EQ(first.result(), v1::LookupResponse::RESULT_HIT);
  EXPECT_EQ(first.device_class(), device_class());
  EXPECT_EQ(first.record().tuned().median_us(), 10);
  EXPECT_FALSE(first.staleness().stale());
  EXPECT_TRUE(first.job_id().empty());

  // Written behind the cache's back: the cache answers, not the store.
  store_->PutRecord(canonical, TunedRecord(key, 5));
  auto second = Lookup(key);
  EXPECT_EQ(second.result(), v1::LookupResponse::RESULT_HIT);
  EXPECT_EQ(second.record().tuned().median_us(), 10);
  EXPECT_EQ(metrics_.lookups_hit.value(), 2u);
  EXPECT_EQ(metrics_.lookup_seconds.count(), 2u);
}

TEST_F(LookupResolverTest, HitsFromTheCacheWithoutTheStore) {
  const auto key = GemmKey(32, 32, 32);
  cache_.Put(device_class(), kernels::CanonicalKeyString(key),
             std::make_shared<const v1::Record>(TunedRecord(key, 7)));
  database_.Unreachable("test: the database is down");
  auto response = Lookup(key);
  EXPECT_EQ(response.result(), v1::LookupResponse::RESULT_HIT);
  EXPECT_EQ(response.record().tuned().median_us(), 7);
}

TEST_F(LookupResolverTest, ResolveApartHandsBackTheRecordResolveCopiesIn) {
  const auto key = GemmKey(48, 48, 48);
  store_->PutRecord(kernels::CanonicalKeyString(key), TunedRecord(key, 9));
  v1::LookupRequest request;
  *request.mutable_key() = key;
  for (int i = 0; i < 2; ++i) {  // filled from the store, then from the cache
    SCOPED_TRACE(i);
    v1::LookupResponse apart;
    LookupCache::Entry record;
    ASSERT_FALSE(resolver_.ResolveApart(request, apart, record));
    ASSERT_TRUE(record);
    EXPECT_FALSE(apart.has_record());
    EXPECT_EQ(apart.result(), v1::LookupResponse::RESULT_HIT);
    *apart.mutable_record() = *record->record;
    EXPECT_EQ(apart.SerializeAsString(), Lookup(key).SerializeAsString());
  }
}

TEST_F(LookupResolverTest, MissesWithTheFallbackAndQueuesNothingUnasked) {
  auto response = Lookup(GemmKey(64, 64, 64));
  EXPECT_EQ(response.result(), v1::LookupResponse::RESULT_MISS);
  EXPECT_EQ(response.fallback().library(), FallbackLibraryFor(device().info.fingerprint.vendor()));
  EXPECT_EQ(response.fallback().reason(),
            "no tuning record for this key on device class " + device_class());
  EXPECT_TRUE(response.job_id().empty());
  EXPECT_TRUE(Jobs().empty());
  EXPECT_EQ(metrics_.lookups_miss.value(), 1u);
}

TEST_F(LookupResolverTest, MissesWithTheFallbackWhileTheDatabaseIsUnreachable) {
  database_.Unreachable("test: the database is down");
  auto response = Lookup(GemmKey(64, 64, 64), /*tune_on_miss=*/true);
  EXPECT_EQ(response.result(), v1::LookupResponse::RESULT_MISS);
  EXPECT_EQ(response.fallback().library(), FallbackLibraryFor(device().info.fingerprint.vendor()));
  EXPECT_EQ(response.fallback().reason(),
            "the tuning database is unreachable and this daemon has no cached answer for this key");
  EXPECT_TRUE(response.job_id().empty());
  // Nothing was cached: the next lookup once the database is back asks it.
  database_.Reachable();
  EXPECT_TRUE(Jobs().empty());
  EXPECT_FALSE(cache_.Find(device_class(), kernels::CanonicalKeyString(GemmKey(64, 64, 64))));
}

TEST_F(LookupResolverTest, AFloodOfTuneOnMissLookupsQueuesOneJobAndCountsEveryMiss) {
  const auto key = GemmKey(128, 64, 32);
  std::set<std::string> job_ids;
  for (int i = 0; i < 20; ++i) {
    auto response = Lookup(key, /*tune_on_miss=*/true);
    EXPECT_EQ(response.result(), v1::LookupResponse::RESULT_MISS);
    job_ids.insert(response.job_id());
  }
  ASSERT_EQ(job_ids.size(), 1u);
  const std::string job_id = *job_ids.begin();
  EXPECT_FALSE(job_id.empty());

  auto jobs = Jobs();
  ASSERT_EQ(jobs.size(), 1u);
  EXPECT_EQ(jobs[0].id(), job_id);
  EXPECT_EQ(jobs[0].spec().name(), "tune-on-miss");
  EXPECT_EQ(jobs[0].state(), v1::JOB_QUEUED);
  EXPECT_EQ(jobs[0].device(), device().queue);
  EXPECT_EQ(jobs[0].spec().priority(), config_.tune_on_miss_priority);
  ASSERT_EQ(jobs[0].items_size(), 1);
  EXPECT_EQ(kernels::CanonicalKeyString(jobs[0].items(0).key()), kernels::CanonicalKeyString(key));
  EXPECT_EQ(metrics_.jobs_submitted.value(), 1u);
  EXPECT_EQ(context_.misses.TakeChangedJobCounts(), (std::map<std::string, int64_t>{{job_id, 20}}));
}

TEST_F(LookupResolverTest, TuneOnMissPastItsCapSaysWhyNoJobWasQueued) {
  config_.max_queued_tune_on_miss = 1;
  EXPECT_FALSE(Lookup(GemmKey(64, 64, 64), /*tune_on_miss=*/true).job_id().empty());
  auto refused = Lookup(GemmKey(96, 96, 96), /*tune_on_miss=*/true);
  EXPECT_TRUE(refused.job_id().empty());
  EXPECT_EQ(refused.fallback().reason(),
            "no tuning record for this key on device class " + device_class() +
                "; tune_on_miss: not queued: 1 tune-on-miss jobs already queued "
                "(max_queued_tune_on_miss=1)");
  EXPECT_EQ(Jobs().size(), 1u);
}

TEST_F(LookupResolverTest, TuneOnMissForAClassNotHereIsIgnoredOnOneNode) {
  auto response = Lookup(GemmKey(64, 64, 64), /*tune_on_miss=*/true, "elsewhere-class");
  EXPECT_EQ(response.result(), v1::LookupResponse::RESULT_MISS);
  EXPECT_EQ(response.device_class(), "elsewhere-class");
  EXPECT_EQ(response.fallback().reason(),
            "no tuning record for this key on device class elsewhere-class; tune_on_miss "
            "ignored: no device of this class here");
  EXPECT_TRUE(Jobs().empty());
}

TEST_F(LookupResolverTest, AStaleRecordIsServedAndQueuesOneRetune) {
  const auto key = GemmKey(64, 64, 64);
  auto record = TunedRecord(key, 10);
  record.mutable_toolchain()->set_driver_version("an-older-driver");
  store_->PutRecord(kernels::CanonicalKeyString(key), record);

  auto first = Lookup(key);
  EXPECT_EQ(first.result(), v1::LookupResponse::RESULT_HIT);
  EXPECT_TRUE(first.staleness().stale());
  EXPECT_FALSE(first.job_id().empty());
  auto second = Lookup(key);
  EXPECT_EQ(second.result(), v1::LookupResponse::RESULT_HIT);
  EXPECT_TRUE(second.job_id().empty());
  auto jobs = Jobs();
  ASSERT_EQ(jobs.size(), 1u);
  EXPECT_EQ(jobs[0].id(), first.job_id());
  EXPECT_EQ(jobs[0].spec().name(), "stale-retune");
}

TEST_F(LookupResolverTest, AnInvalidKeyIsAFieldErrorNamedAfterThePrefix) {
  v1::LookupRequest request;
  request.mutable_key()->set_op("no-such-op");
  v1::LookupResponse response;
  auto error = resolver_.Resolve(request, response, "requests[3].");
  ASSERT_TRUE(error);
  EXPECT_EQ(error->field.rfind("requests[3].key", 0), 0u) << error->ToString();
  EXPECT_EQ(metrics_.lookups_invalid.value(), 1u);
  EXPECT_EQ(metrics_.lookup_seconds.count(), 1u);
}

// Fleet mode: a class only another live daemon of the database has.
class FleetLookupResolverTest : public LookupResolverTest {
 protected:
  FleetLookupResolverTest() : LookupResolverTest(JobQueues::kPerDeviceClass) {}
};

TEST_F(FleetLookupResolverTest, TuneOnMissQueuesByClassOnlyForALiveDaemonOfTheFleet) {
  auto unserved = Lookup(GemmKey(64, 64, 64), /*tune_on_miss=*/true, "remote-class");
  EXPECT_TRUE(unserved.job_id().empty());
  EXPECT_EQ(unserved.fallback().reason(),
            "no tuning record for this key on device class remote-class; tune_on_miss ignored: "
            "no device of this class here nor on a live daemon of the fleet");

  v1::FleetDaemon remote;
  remote.set_daemon_id("remote-daemon");
  remote.add_devices()->mutable_fingerprint()->set_device_class("remote-class");
  store_->AnnounceDaemon(remote);
  auto served = Lookup(GemmKey(64, 64, 64), /*tune_on_miss=*/true, "remote-class");
  ASSERT_FALSE(served.job_id().empty()) << served.fallback().reason();
  auto jobs = Jobs();
  ASSERT_EQ(jobs.size(), 1u);
  EXPECT_EQ(jobs[0].device(), "remote-class");
  EXPECT_EQ(jobs[0].spec().device().device_class(), "remote-class");
}

}  // namespace
}  // namespace tiletune::server
