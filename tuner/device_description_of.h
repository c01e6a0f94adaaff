#pragma once

#include "kernels/core/device_description.h"
#include "runtime/backend.h"

namespace tiletune::tuner {

// What the search spaces of `device` are built on: its backend, arch and SM
// (CU) count from its fingerprint, the warp size its kernels compile for, its
// shared memory per block as the driver reported it or, where it did not,
// the arch's known limit, sm_90a on sm_90, and on the host whether OpenBLAS
// links.
kernels::DeviceDescription DeviceDescriptionOf(const runtime::DeviceInfo& device);

}  // namespace tiletune::tuner
