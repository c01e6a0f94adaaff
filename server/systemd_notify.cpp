#include "server/systemd_notify.h"

#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <cstddef>
#include <cstdlib>
#include <cstring>

namespace tiletune::server {

SystemdNotifier::SystemdNotifier() {
  if (const char* path = std::getenv("NOTIFY_SOCKET")) socket_path_ = path;
  // systemd sets WATCHDOG_PID too; the watchdog is ours only if it names us.
  const char* usec = std::getenv("WATCHDOG_USEC");
  const char* pid = std::getenv("WATCHDOG_PID");
  if (usec && (!pid || std::atoll(pid) == getpid())) {
    watchdog_interval_us_ = std::atoll(usec) / 2;
  }
}

bool SystemdNotifier::Notify(std::string_view state) const {
  if (socket_path_.empty()) return true;
  sockaddr_un address{};
  address.sun_family = AF_UNIX;
  if (socket_path_.size() >= sizeof(address.sun_path)) return false;
  std::memcpy(address.sun_path, socket_path_.data(), socket_path_.size());
  if (address.sun_path[0] == '@') address.sun_path[0] = '\0';
  const auto length = static_cast<socklen_t>(offsetof(sockaddr_un, sun_path) + socket_path_.size());
  const int fd = socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0);
  if (fd < 0) return false;
  const ssize_t sent = sendto(fd, state.data(), state.size(), MSG_NOSIGNAL,
                              reinterpret_cast<const sockaddr*>(&address), length);
  close(fd);
  return sent == static_cast<ssize_t>(state.size());
}

}  // namespace tiletune::server
