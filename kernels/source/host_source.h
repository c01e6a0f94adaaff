#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "kernels/core/device_description.h"
#include "kernels/core/kernel_template.h"

namespace tiletune::kernels::host {

// Name of the host baselines that are our straightforward kernel for the op
// + chain (every op's; GEMM's where OpenBLAS does not link).
inline constexpr const char* kHostBaselineName = "host-naive";

// A compile option asking the host backend to link OpenBLAS into the shared
// object (the GEMM baseline). tiletune's own, like kArchSpecificOption: the
// backend replaces it with the library it found, or fails the compile where
// it found none.
inline constexpr std::string_view kLinkOpenBlasOption = "--tiletune-link-openblas";

// What one generated host kernel is: `function` is a kernel template of the
// op's header (tt::gemm_blocked...) called as function<Config>(args, epilogue)
// with Config holding `config` as constants.
struct HostKernelSpec {
  std::string kernel_name;  // template name, or the baseline's name
  std::string header;       // "ops/gemm/cpu/gemm_blocked.h"
  std::string function;     // "tt::gemm_blocked"
  std::vector<std::pair<std::string, int64_t>> config;
  // C++ expression over `args`: the number of output elements (planted fault 3).
  std::string output_elements;
  int threads = 1;
  // Row and element-wise kernels take the key's prologue as a second functor:
  // function<Config>(args, Prologue{args}, Epilogue{args}).
  bool takes_prologue = false;
};

// The thread counts a host template offers on `device`: 1 and 2, at most
// the CPUs the daemon may use (its compute units), so that a daemon limited
// to one CPU (host_cpus 1) never times a variant fighting itself for it.
std::vector<int64_t> HostThreadCounts(const DeviceDescription& device);

// Why a host kernel cannot serve the key's types (host kernels are f32
// through and through), or nullopt.
std::optional<std::string> UnsupportedHostTypes(const v1::KernelKey& key);

// The complete source of a host kernel for the key: the epilogue chain as a
// functor, the Config constants and one exported entry. `planted_fault` is
// 0 for a real kernel (see kPlantedFault).
KernelSource GenerateHostSource(const v1::KernelKey& key, const HostKernelSpec& spec,
                                int64_t planted_fault = 0);

}  // namespace tiletune::kernels::host
