#pragma once

#include <string>

#include <grpcpp/support/status.h>

#include "client/cli/command_error.h"

namespace tiletune::cli {

// The CommandError for a failed call to the daemon at `address`: the exit code
// follows the status code, the message keeps the server's text (which names
// the offending field for INVALID_ARGUMENT).
CommandError ErrorFromStatus(const grpc::Status& status, const std::string& address,
                             double timeout_seconds);

}  // namespace tiletune::cli
