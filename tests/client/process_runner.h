#pragma once

#include <chrono>
#include <string>
#include <vector>

namespace tiletune::testing {

struct ProcessResult {
  int exit_code = -1;  // -1 when killed by a signal
  std::string out;
  std::string err;
  std::chrono::milliseconds elapsed{0};
};

// Runs `argv` (argv[0] a path) with stdin closed, collecting stdout and
// stderr; kills it with SIGKILL after `limit` and fails the test then.
ProcessResult RunProcess(const std::vector<std::string>& argv,
                         std::chrono::milliseconds limit = std::chrono::seconds(20));

// The lines of `text`, without their '\n'.
std::vector<std::string> Lines(const std::string& text);

}  // namespace tiletune::testing
