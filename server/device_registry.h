#pragma once

#include <atomic>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "runtime/backend_registry.h"
#include "tiletune/v1/tiletune.pb.h"

namespace tiletune::server {

// Which queue (Job.device) the jobs of a device wait in.
enum class JobQueues {
  // One node: each device has its own, named by its id ("cpu:0").
  kPerDevice,
  // Fleet mode (a shared database): one per device class, shared by every
  // daemon with a device of that class, so that no daemon claims work meant
  // for hardware it does not have.
  kPerDeviceClass,
};

// A device this daemon tunes on, with what it is doing now.
struct ManagedDevice {
  runtime::DeviceInfo info;
  runtime::Backend* backend = nullptr;
  // The queue it claims job items from, set at start (see JobQueues).
  std::string queue;
  std::atomic<v1::Device::State> state{v1::Device::STATE_IDLE};
  std::atomic<int> worker_restarts{0};
  // Worker crashes since the last variant that ran to an answer.
  std::atomic<int> consecutive_crashes{0};

  std::string running_job() const;
  void set_running_job(std::string job_id);

 private:
  mutable std::mutex mu_;
  std::string running_job_;
};

// The backends found at start and the devices chosen from them.
class DeviceRegistry {
 public:
  // Keeps the devices named in `wanted` (all when empty); throws
  // std::invalid_argument naming a wanted id that no backend has.
  DeviceRegistry(runtime::DiscoveredBackends backends, const std::vector<std::string>& wanted,
                 JobQueues queues);

  const std::vector<std::unique_ptr<ManagedDevice>>& devices() const { return devices_; }
  JobQueues queues() const { return queues_; }
  const std::vector<runtime::BackendStatus>& statuses() const { return backends_.statuses; }
  ManagedDevice* Find(const std::string& id) const;
  // The first device of `device_class`, or null.
  ManagedDevice* FindByClass(const std::string& device_class) const;
  // Known device ids, comma separated, for error messages.
  std::string KnownIds() const;

  v1::Device ToProto(const ManagedDevice& device) const;

 private:
  runtime::DiscoveredBackends backends_;
  JobQueues queues_;
  std::vector<std::unique_ptr<ManagedDevice>> devices_;
};

// What a client should run instead when no tuned kernel is served.
std::string FallbackLibraryFor(const std::string& vendor);

}  // namespace tiletune::server
