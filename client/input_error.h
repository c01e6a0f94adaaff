#pragma once

#include <stdexcept>

namespace tiletune::client {

// Text a person wrote (a job file, a command-line flag) that cannot be read.
// The message names the file, the field and, where known, the line.
class InputError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

}  // namespace tiletune::client
