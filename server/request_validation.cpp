#include "server/request_validation.h"

#include "server/planned_kernels.h"

namespace tiletune::server {

std::variant<ResolvedDevice, kernels::FieldError> ResolveDevice(const v1::DeviceSelector& selector,
                                                                const DeviceRegistry& devices,
                                                                const std::string& prefix) {
  ResolvedDevice out;
  if (!selector.device().empty()) {
    out.device = devices.Find(selector.device());
    if (!out.device) {
      return kernels::FieldError{prefix + ".device", "unknown device '" + selector.device() +
                                                         "' (known: " + devices.KnownIds() + ")"};
    }
  } else if (selector.device_class().empty()) {
    if (devices.devices().empty()) {
      return kernels::FieldError{prefix + ".device", "this daemon has no device"};
    }
    out.device = devices.devices().front().get();
  }
  if (out.device) {
    out.device_class = out.device->info.fingerprint.device_class();
    out.vendor = out.device->info.fingerprint.vendor();
    if (!selector.device_class().empty() && selector.device_class() != out.device_class) {
      return kernels::FieldError{prefix + ".device_class",
                                 "'" + selector.device_class() + "' is not the class of device " +
                                     out.device->info.id + " (" + out.device_class + ")"};
    }
    return out;
  }
  out.device_class = selector.device_class();
  for (const auto& d : devices.devices()) {
    if (d->info.fingerprint.device_class() == out.device_class) {
      out.device = d.get();
      out.vendor = d->info.fingerprint.vendor();
    }
  }
  return out;
}

std::optional<kernels::FieldError> ValidateJobSpec(const v1::JobSpec& spec,
                                                   const DaemonConfig& config,
                                                   const DeviceRegistry& devices,
                                                   const std::set<std::string>& fleet_classes) {
  if (spec.kernels_size() == 0) {
    return kernels::FieldError{"spec.kernels", "a job needs at least one kernel key"};
  }
  if (spec.kernels_size() > config.max_kernels_per_job) {
    return kernels::FieldError{"spec.kernels", "has " + std::to_string(spec.kernels_size()) +
                                                   " keys; the limit is " +
                                                   std::to_string(config.max_kernels_per_job)};
  }
  for (int i = 0; i < spec.kernels_size(); ++i) {
    if (auto e = kernels::ValidateKernelKey(spec.kernels(i), config.key_limits,
                                            "spec.kernels[" + std::to_string(i) + "]")) {
      return e;
    }
  }
  if (const auto planned = PlannedJobKernels(spec, config.key_limits).size();
      static_cast<int>(planned) > config.max_kernels_per_job) {
    return kernels::FieldError{"spec.kernels", "op graphs plan to " + std::to_string(planned) +
                                                   " kernels; the limit is " +
                                                   std::to_string(config.max_kernels_per_job)};
  }
  if (spec.budget().max_variants() < 0) {
    return kernels::FieldError{"spec.budget.max_variants", "must not be negative"};
  }
  if (spec.budget().max_variants() > config.tuning.max_variants_cap) {
    return kernels::FieldError{
        "spec.budget.max_variants",
        "exceeds the limit " + std::to_string(config.tuning.max_variants_cap)};
  }
  if (spec.budget().max_seconds() < 0) {
    return kernels::FieldError{"spec.budget.max_seconds", "must not be negative"};
  }
  if (!v1::Strategy_IsValid(spec.strategy())) {
    return kernels::FieldError{"spec.strategy", "unknown strategy"};
  }
  auto device = ResolveDevice(spec.device(), devices, "spec.device");
  if (auto* e = std::get_if<kernels::FieldError>(&device)) return *e;
  if (!std::get<ResolvedDevice>(device).device &&
      !fleet_classes.contains(spec.device().device_class())) {
    return kernels::FieldError{"spec.device.device_class",
                               "no device of class '" + spec.device().device_class() +
                                   "' on this daemon (known: " + devices.KnownIds() +
                                   ") nor on a live daemon of its fleet"};
  }
  return std::nullopt;
}

std::variant<int, kernels::FieldError> PageSize(int requested, int max_page_size) {
  if (requested < 0) return kernels::FieldError{"page_size", "must not be negative"};
  if (requested > max_page_size) {
    return kernels::FieldError{"page_size", "exceeds the limit " + std::to_string(max_page_size)};
  }
  return requested == 0 ? std::min(100, max_page_size) : requested;
}

}  // namespace tiletune::server
