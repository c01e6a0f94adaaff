#pragma once

#include <string>
#include <string_view>

namespace tiletune::server {

// systemd's readiness protocol (sd_notify(3)) without libsystemd: one
// datagram such as "READY=1" to the unix socket named by $NOTIFY_SOCKET
// ('@' first means the abstract namespace). Does nothing when the variable
// is unset, i.e. when not started by systemd with Type=notify.
class SystemdNotifier {
 public:
  // Reads $NOTIFY_SOCKET and $WATCHDOG_USEC once.
  SystemdNotifier();

  // Sends `state`; returns false when there is a socket and sending failed.
  bool Notify(std::string_view state) const;

  bool active() const { return !socket_path_.empty(); }
  // How often to send "WATCHDOG=1" (half the watchdog interval); 0: no
  // watchdog asked for.
  long long watchdog_interval_us() const { return watchdog_interval_us_; }

 private:
  std::string socket_path_;
  long long watchdog_interval_us_ = 0;
};

}  // namespace tiletune::server
