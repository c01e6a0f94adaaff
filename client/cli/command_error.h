#pragma once

#include <stdexcept>
#include <string>

#include "client/cli/exit_codes.h"

namespace tiletune::cli {

// Ends a command: `what()` is the one line printed after "tiletune: ".
class CommandError : public std::runtime_error {
 public:
  CommandError(ExitCode code, const std::string& message)
      : std::runtime_error(message), code_(code) {}
  ExitCode code() const { return code_; }

 private:
  ExitCode code_;
};

}  // namespace tiletune::cli
