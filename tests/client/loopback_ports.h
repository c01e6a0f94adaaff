#pragma once

#include <string>

namespace tiletune::testing {

// A TCP socket on 127.0.0.1 and an ephemeral port, closed on destruction.
// Holding it keeps the port from being reused by anyone else during a test.
class LoopbackPort {
 public:
  enum class Mode {
    kRefusing,  // bound but not listening: connections are refused at once
    kSilent,    // listening but never answering: calls run into their deadline
  };

  explicit LoopbackPort(Mode mode);
  ~LoopbackPort();
  LoopbackPort(const LoopbackPort&) = delete;
  LoopbackPort& operator=(const LoopbackPort&) = delete;

  // "127.0.0.1:<port>".
  const std::string& address() const { return address_; }

 private:
  int fd_ = -1;
  std::string address_;
};

}  // namespace tiletune::testing
