#pragma once

#include <cstddef>
#include <optional>
#include <set>
#include <string>
#include <variant>

#include "kernels/core/kernel_key.h"
#include "server/daemon_config.h"
#include "server/device_registry.h"
#include "tiletune/v1/tiletune.pb.h"

namespace tiletune::server {

// The device (or only the device class) a request is about.
struct ResolvedDevice {
  ManagedDevice* device = nullptr;  // null when only a foreign class was named
  std::string device_class;
  std::string vendor;  // empty for a foreign class
};

// Resolves a selector: an explicit class, a device id, or this daemon's first
// device. Both are names (limits.max_name_bytes): a class is echoed in
// answers. Errors name `prefix`.device / `prefix`.device_class.
std::variant<ResolvedDevice, kernels::FieldError> ResolveDevice(const v1::DeviceSelector& selector,
                                                                const DeviceRegistry& devices,
                                                                const kernels::KeyLimits& limits,
                                                                const std::string& prefix);

// Field-level checks of a job spec against the daemon's limits (its name
// within max_name_bytes); keys are checked with kernels::ValidateKernelKey,
// the budget must be finite and not negative. The
// spec's device must be one of ours, or name a device class in
// `fleet_classes`: those that live daemons of the fleet serve
// (ServedDeviceClasses; empty on one node).
std::optional<kernels::FieldError> ValidateJobSpec(const v1::JobSpec& spec,
                                                   const DaemonConfig& config,
                                                   const DeviceRegistry& devices,
                                                   const std::set<std::string>& fleet_classes);

// A SubmitJob's request_id: empty (none), or at most max_name_bytes of
// printable ASCII without spaces, since it is logged and stored as a key.
std::optional<kernels::FieldError> ValidateRequestId(const std::string& request_id,
                                                     const kernels::KeyLimits& limits);

// Page size to use: `requested` <= 0 gives the default, larger than the
// limit is an error.
std::variant<int, kernels::FieldError> PageSize(int requested, int max_page_size);

// Where a ListTrials page starts: its page_token is the offset of the
// page's first trial (an item's trials are only ever appended, so an offset
// stays where it was); empty is 0.
std::variant<std::size_t, kernels::FieldError> TrialPageOffset(const std::string& page_token);

}  // namespace tiletune::server
