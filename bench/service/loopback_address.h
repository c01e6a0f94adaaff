#pragma once

#include <string_view>

namespace tiletune::bench {

// True for a gRPC address whose host is in 127.0.0.0/8, "localhost" or
// [::1], as "host:port", "[::1]:port", or the same behind "dns:///", "ipv4:"
// or "ipv6:". The load generator refuses anything else: it is meant to load
// the daemon on this machine, never a shared one by accident.
bool IsLoopbackAddress(std::string_view address);

}  // namespace tiletune::bench
