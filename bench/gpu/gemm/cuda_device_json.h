#pragma once

#include <string>

#include <nlohmann/json.hpp>

#include "runtime/cuda/cuda_driver_api.h"

namespace tiletune::bench {

// Device 0's name, compute capability (also in `arch`: "sm_90") and driver
// version, for the benchmarks' reports; throws naming a failed driver call.
nlohmann::json CudaDeviceJson(const runtime::cuda::CudaDriver& driver, std::string* arch);

}  // namespace tiletune::bench
