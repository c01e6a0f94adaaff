#pragma once

#include <optional>
#include <string>
#include <string_view>

#include "tiletune/v1/records.pb.h"

namespace tiletune::runtime {

// The device class id of a fingerprint: a short hex hash of vendor, arch,
// name and compute units, the fields that decide whether a measurement
// carries over from one device to another.
std::string DeviceClassId(const v1::DeviceFingerprint& fingerprint);

// The backend whose devices report fingerprints of `vendor` (cpu: host,
// nvidia: cuda, amd: hip), or nullopt for a vendor no backend reports.
std::optional<std::string_view> BackendOfVendor(std::string_view vendor);

}  // namespace tiletune::runtime
