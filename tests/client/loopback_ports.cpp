#include "loopback_ports.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <stdexcept>

namespace tiletune::testing {

LoopbackPort::LoopbackPort(Mode mode) {
  fd_ = socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  socklen_t length = sizeof addr;
  if (fd_ < 0 || bind(fd_, reinterpret_cast<sockaddr*>(&addr), sizeof addr) != 0 ||
      getsockname(fd_, reinterpret_cast<sockaddr*>(&addr), &length) != 0 ||
      (mode == Mode::kSilent && listen(fd_, 16) != 0)) {
    if (fd_ >= 0) close(fd_);
    throw std::runtime_error("cannot set up a loopback socket");
  }
  address_ = "127.0.0.1:" + std::to_string(ntohs(addr.sin_port));
}

LoopbackPort::~LoopbackPort() {
  if (fd_ >= 0) close(fd_);
}

}  // namespace tiletune::testing
