#include "tests/support/notify_socket.h"

#include <gtest/gtest.h>
#include <poll.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <cstddef>
#include <cstring>

namespace tiletune::testing {

NotifySocket::NotifySocket(std::string path) : path_(std::move(path)) {
  fd_ = socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0);
  sockaddr_un address{};
  address.sun_family = AF_UNIX;
  std::memcpy(address.sun_path, path_.data(), path_.size());
  if (path_[0] == '@') address.sun_path[0] = '\0';
  const auto length = static_cast<socklen_t>(offsetof(sockaddr_un, sun_path) + path_.size());
  EXPECT_EQ(bind(fd_, reinterpret_cast<sockaddr*>(&address), length), 0) << strerror(errno);
}

NotifySocket::~NotifySocket() {
  close(fd_);
  if (path_[0] != '@') unlink(path_.c_str());
}

std::optional<std::string> NotifySocket::Receive(std::chrono::milliseconds timeout) {
  pollfd ready{fd_, POLLIN, 0};
  if (poll(&ready, 1, static_cast<int>(timeout.count())) != 1) return std::nullopt;
  char buffer[4096];
  const ssize_t n = recv(fd_, buffer, sizeof(buffer), 0);
  if (n < 0) return std::nullopt;
  return std::string(buffer, static_cast<size_t>(n));
}

std::optional<std::string> NotifySocket::ReceiveContaining(const std::string& needle,
                                                           std::chrono::milliseconds timeout) {
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  while (std::chrono::steady_clock::now() < deadline) {
    auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
        deadline - std::chrono::steady_clock::now());
    auto message = Receive(left);
    if (!message) return std::nullopt;
    if (message->find(needle) != std::string::npos) return message;
  }
  return std::nullopt;
}

}  // namespace tiletune::testing
