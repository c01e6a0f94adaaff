#pragma once

#include <string>
#include <variant>

#include "runtime/backend.h"
#include "tiletune/v1/artifacts.pb.h"
#include "tiletune/v1/records.pb.h"

namespace tiletune::tuner {

// The compiled kernel a record serves, rebuilt on a device of its class.
struct ServedKernel {
  std::string backend;  // the device's: cuda, hip, host
  kernels::KernelSource source;
  runtime::CompileResult compiled;
};

// The kernel `record` (a tuned record of a kernel key) serves on `device`:
// its template (config.kernel_name) in the key's space on the device, its
// parameters, compiled through the backend (the compiled-code cache first).
// Or why there is none: the template or its parameters are unknown here, or
// the source this daemon generates differs from the one measured (its hash
// is not config.source_hash: another kernel library), or the compile
// failed.
std::variant<ServedKernel, std::string> BuildServedKernel(const v1::Record& record,
                                                          const runtime::DeviceInfo& device,
                                                          runtime::Backend& backend,
                                                          const runtime::CompileLimits& limits);

// The artifact's description (code left out: `code_bytes` and
// `content_hash` describe `code`) for a client to load and launch it.
v1::KernelArtifact DescribeArtifact(const v1::Record& record, const ServedKernel& kernel,
                                    const std::string& code, bool include_source);

}  // namespace tiletune::tuner
