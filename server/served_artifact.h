#pragma once

#include <string>
#include <variant>

#include <grpcpp/support/status.h>

#include "server/service_context.h"
#include "tiletune/v1/tiletune.pb.h"

namespace tiletune::server {

// A tuned record's kernel as a client receives it: the signed description
// and the code it describes.
struct ServedArtifact {
  v1::KernelArtifact artifact;
  std::string code;
};

// The kernel a lookup's answer serves (GetKernel, and Lookup with
// attach_artifact): rebuilt on a device of the record's class here (the
// compiled-code cache first), described and signed. Or the fallback and
// why when nothing tuned is served (a miss, a VENDOR record, no device of
// the class, a kernel this daemon cannot rebuild), never another binary;
// or an error status (the code is larger than max_artifact_bytes).
using ArtifactAnswer = std::variant<ServedArtifact, v1::Fallback, grpc::Status>;
ArtifactAnswer ServeArtifact(const ServiceContext& ctx, const v1::LookupResponse& lookup,
                             bool include_source);

}  // namespace tiletune::server
