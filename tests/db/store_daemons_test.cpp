// The fleet view: daemons announce themselves at each heartbeat and are
// listed with the age of their last one; none is ever deleted.
#include <chrono>
#include <thread>

#include "db/tuning_store.h"
#include "store_test.h"

namespace tiletune::db {
namespace {

v1::FleetDaemon Daemon(const std::string& id, const std::string& device_class,
                       const std::string& running_job = "") {
  v1::FleetDaemon daemon;
  daemon.set_daemon_id(id);
  daemon.set_address("10.0.0.1:7733");
  auto* device = daemon.add_devices();
  device->set_id("cpu:0");
  device->mutable_fingerprint()->set_device_class(device_class);
  device->set_state(running_job.empty() ? v1::Device::STATE_IDLE : v1::Device::STATE_BUSY);
  device->set_running_job_id(running_job);
  return daemon;
}

class StoreDaemons : public StoreTest {};

TEST_P(StoreDaemons, AreListedByIdWithTheirDevicesAndHeartbeatAge) {
  auto store = Open();
  EXPECT_TRUE(store->ListDaemons().empty());
  store->AnnounceDaemon(Daemon("b", "cpu-two"));
  store->AnnounceDaemon(Daemon("a", "cpu-one"));
  std::this_thread::sleep_for(std::chrono::milliseconds(200));
  // A heartbeat replaces what the daemon said before.
  store->AnnounceDaemon(Daemon("a", "cpu-one", "job-1"));

  const auto daemons = store->ListDaemons();
  ASSERT_EQ(daemons.size(), 2u);
  EXPECT_EQ(daemons[0].daemon_id(), "a");
  EXPECT_EQ(daemons[1].daemon_id(), "b");
  ASSERT_EQ(daemons[0].devices_size(), 1);
  EXPECT_EQ(daemons[0].devices(0).running_job_id(), "job-1");
  EXPECT_EQ(daemons[0].devices(0).fingerprint().device_class(), "cpu-one");
  EXPECT_EQ(daemons[1].devices(0).fingerprint().device_class(), "cpu-two");
  EXPECT_LT(daemons[0].heartbeat_age_seconds(), daemons[1].heartbeat_age_seconds());
  EXPECT_GE(daemons[1].heartbeat_age_seconds(), 0.2);
  EXPECT_GT(daemons[0].last_heartbeat().seconds(), 0);
  EXPECT_EQ(Query("SELECT count(*) FROM daemons"), "2");
}

TEST_P(StoreDaemons, NeedAnId) {
  auto store = Open();
  EXPECT_THROW(store->AnnounceDaemon(Daemon("", "cpu-one")), std::invalid_argument);
}

TILETUNE_STORE_TEST_SUITE(StoreDaemons);

}  // namespace
}  // namespace tiletune::db
