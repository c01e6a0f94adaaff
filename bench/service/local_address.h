#pragma once

#include <string_view>

namespace tiletune::bench {

// True for a gRPC address on this machine: a host in 127.0.0.0/8,
// "localhost" or [::1], as "host:port", "[::1]:port", or the same behind
// "dns:///", "ipv4:" or "ipv6:"; or a Unix-domain socket, "unix:PATH" (the
// daemon's listen_unix). The load generator refuses anything else: it is meant to load
// the daemon on this machine, never a shared one by accident.
bool IsLocalAddress(std::string_view address);

}  // namespace tiletune::bench
