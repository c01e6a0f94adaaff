#pragma once

#include <chrono>
#include <optional>
#include <string>

namespace tiletune::testing {

// A unix datagram socket standing in for systemd's notification socket.
class NotifySocket {
 public:
  // Binds `path`; a leading '@' names an abstract socket.
  explicit NotifySocket(std::string path);
  ~NotifySocket();
  NotifySocket(const NotifySocket&) = delete;
  NotifySocket& operator=(const NotifySocket&) = delete;

  const std::string& path() const { return path_; }
  // The next datagram, or nothing within `timeout`.
  std::optional<std::string> Receive(std::chrono::milliseconds timeout);
  // Datagrams until one contains `needle` (returned) or `timeout` passes.
  std::optional<std::string> ReceiveContaining(const std::string& needle,
                                               std::chrono::milliseconds timeout);

 private:
  std::string path_;
  int fd_ = -1;
};

}  // namespace tiletune::testing
