#include "server/device_registry.h"

#include <algorithm>
#include <stdexcept>

namespace tiletune::server {

std::string ManagedDevice::running_job() const {
  std::lock_guard lock(mu_);
  return running_job_;
}

void ManagedDevice::set_running_job(std::string job_id) {
  std::lock_guard lock(mu_);
  running_job_ = std::move(job_id);
}

DeviceRegistry::DeviceRegistry(runtime::DiscoveredBackends backends,
                               const std::vector<std::string>& wanted, JobQueues queues)
    : backends_(std::move(backends)), queues_(queues) {
  for (const auto& backend : backends_.backends) {
    for (auto& info : backend->Devices()) {
      if (!wanted.empty() && std::find(wanted.begin(), wanted.end(), info.id) == wanted.end()) {
        continue;
      }
      auto device = std::make_unique<ManagedDevice>();
      device->info = std::move(info);
      device->backend = backend.get();
      device->queue = queues == JobQueues::kPerDevice ? device->info.id
                                                      : device->info.fingerprint.device_class();
      devices_.push_back(std::move(device));
    }
  }
  for (const auto& id : wanted) {
    if (!Find(id)) {
      throw std::invalid_argument("devices: no backend has a device '" + id + "'");
    }
  }
}

ManagedDevice* DeviceRegistry::Find(const std::string& id) const {
  for (const auto& d : devices_) {
    if (d->info.id == id) return d.get();
  }
  return nullptr;
}

ManagedDevice* DeviceRegistry::FindByClass(const std::string& device_class) const {
  for (const auto& d : devices_) {
    if (d->info.fingerprint.device_class() == device_class) return d.get();
  }
  return nullptr;
}

std::string DeviceRegistry::KnownIds() const {
  std::string ids;
  for (const auto& d : devices_) ids += (ids.empty() ? "" : ", ") + d->info.id;
  return ids.empty() ? "none" : ids;
}

v1::Device DeviceRegistry::ToProto(const ManagedDevice& device) const {
  v1::Device out;
  out.set_id(device.info.id);
  out.set_backend(device.info.backend);
  *out.mutable_fingerprint() = device.info.fingerprint;
  *out.mutable_toolchain() = device.info.toolchain;
  out.set_state(device.state.load());
  out.set_running_job_id(device.running_job());
  out.set_worker_restarts(device.worker_restarts.load());
  return out;
}

std::string FallbackLibraryFor(const std::string& vendor) {
  if (vendor == "nvidia") return "cublasLt";
  if (vendor == "amd") return "hipblaslt";
  return "host-naive";
}

}  // namespace tiletune::server
