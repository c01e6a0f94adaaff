#include "server/request_validation.h"

#include <cmath>

#include <fmt/format.h>

#include "server/planned_kernels.h"

namespace tiletune::server {
namespace {

// NaN passes every comparison and Infinity every lower bound, so finiteness
// comes before any range check.
std::optional<kernels::FieldError> NonFinite(double value, const std::string& field) {
  if (std::isfinite(value)) return std::nullopt;
  return kernels::FieldError{field, "must be a finite number"};
}

}  // namespace

std::variant<ResolvedDevice, kernels::FieldError> ResolveDevice(const v1::DeviceSelector& selector,
                                                                const DeviceRegistry& devices,
                                                                const kernels::KeyLimits& limits,
                                                                const std::string& prefix) {
  for (const auto& [value, field] : {std::pair{&selector.device(), ".device"},
                                     std::pair{&selector.device_class(), ".device_class"}}) {
    // The field's path is spelled only for a name that is too long.
    if (static_cast<int64_t>(value->size()) <= limits.max_name_bytes) continue;
    return *kernels::CheckLength(*value, limits.max_name_bytes, "max_name_bytes", prefix + field);
  }
  ResolvedDevice out;
  if (!selector.device().empty()) {
    out.device = devices.Find(selector.device());
    if (!out.device) {
      return kernels::FieldError{prefix + ".device", "unknown device " +
                                                         kernels::Quoted(selector.device()) +
                                                         " (known: " + devices.KnownIds() + ")"};
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
                                 kernels::Quoted(selector.device_class()) +
                                     " is not the class of device " + out.device->info.id + " (" +
                                     out.device_class + ")"};
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
  if (auto e = kernels::CheckLength(spec.name(), config.key_limits.max_name_bytes, "max_name_bytes",
                                    "spec.name")) {
    return e;
  }
  if (spec.kernels_size() == 0) {
    return kernels::FieldError{"spec.kernels", "a job needs at least one kernel key"};
  }
  if (spec.verify_size() > 0) {
    return kernels::FieldError{"spec.verify",
                               "is set only by the daemon, for the verify jobs of ImportRecords"};
  }
  if (spec.kernels_size() > config.max_kernels_per_job) {
    return kernels::FieldError{"spec.kernels", "has " + std::to_string(spec.kernels_size()) +
                                                   " keys; the limit is " +
                                                   std::to_string(config.max_kernels_per_job)};
  }
  for (int i = 0; i < spec.kernels_size(); ++i) {
    const auto prefix = "spec.kernels[" + std::to_string(i) + "]";
    if (auto e = kernels::ValidateKernelKey(spec.kernels(i), config.key_limits, prefix)) return e;
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
  if (auto e = NonFinite(spec.budget().max_seconds(), "spec.budget.max_seconds")) return e;
  if (spec.budget().max_seconds() < 0) {
    return kernels::FieldError{"spec.budget.max_seconds", "must not be negative"};
  }
  if (spec.budget().max_seconds() > config.tuning.max_seconds_cap) {
    return kernels::FieldError{
        "spec.budget.max_seconds",
        "exceeds the limit max_seconds_cap " + fmt::format("{:g}", config.tuning.max_seconds_cap)};
  }
  if (!v1::Strategy_IsValid(spec.strategy())) {
    return kernels::FieldError{"spec.strategy", "unknown strategy"};
  }
  auto device = ResolveDevice(spec.device(), devices, config.key_limits, "spec.device");
  if (auto* e = std::get_if<kernels::FieldError>(&device)) return *e;
  if (!std::get<ResolvedDevice>(device).device &&
      !fleet_classes.contains(spec.device().device_class())) {
    return kernels::FieldError{"spec.device.device_class",
                               "no device of class " +
                                   kernels::Quoted(spec.device().device_class()) +
                                   " on this daemon (known: " + devices.KnownIds() +
                                   ") nor on a live daemon of its fleet"};
  }
  return std::nullopt;
}

std::optional<kernels::FieldError> ValidateRequestId(const std::string& request_id,
                                                     const kernels::KeyLimits& limits) {
  if (auto e =
          kernels::CheckLength(request_id, limits.max_name_bytes, "max_name_bytes", "request_id")) {
    return e;
  }
  for (std::size_t i = 0; i < request_id.size(); ++i) {
    const unsigned char c = static_cast<unsigned char>(request_id[i]);
    if (c <= ' ' || c > '~') {
      return kernels::FieldError{
          "request_id", "byte " + std::to_string(i) + " is a space or not printable ASCII"};
    }
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

std::variant<std::size_t, kernels::FieldError> TrialPageOffset(const std::string& page_token) {
  // Nine digits at most: far more trials than an item has, and no overflow.
  if (page_token.size() > 9 || page_token.find_first_not_of("0123456789") != std::string::npos) {
    return kernels::FieldError{"page_token", "not a token this listing handed out"};
  }
  return page_token.empty() ? 0 : static_cast<std::size_t>(std::stoul(page_token));
}

}  // namespace tiletune::server
