#pragma once

#include <optional>
#include <string>

#include "tiletune/v1/records.pb.h"

namespace tiletune::server {

// A short stable id of everything in a toolchain that can change what a
// variant compiles to or how it runs (driver, runtime, compiler, kernel
// library): the failure memory is keyed by it.
std::string ToolchainFingerprint(const v1::Toolchain& toolchain);

// Which versions of `measured_with` differ from `current` ("driver 550.54 !=
// 560.28; ..."), or nullopt when they all match: a record measured with
// another toolchain is stale.
std::optional<std::string> ToolchainDifference(const v1::Toolchain& measured_with,
                                               const v1::Toolchain& current);

}  // namespace tiletune::server
