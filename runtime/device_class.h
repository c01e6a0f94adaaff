#pragma once

#include <string>

#include "tiletune/v1/records.pb.h"

namespace tiletune::runtime {

// The device class id of a fingerprint: a short hex hash of vendor, arch,
// name and compute units, the fields that decide whether a measurement
// carries over from one device to another.
std::string DeviceClassId(const v1::DeviceFingerprint& fingerprint);

}  // namespace tiletune::runtime
