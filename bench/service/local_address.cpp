#include "bench/service/local_address.h"

#include <arpa/inet.h>

#include <array>
#include <string>

namespace tiletune::bench {
namespace {

bool IsLoopbackHost(std::string_view host) {
  if (host == "localhost") return true;
  std::string text(host);
  in_addr v4{};
  if (inet_pton(AF_INET, text.c_str(), &v4) == 1) {
    return (ntohl(v4.s_addr) >> 24) == 127;
  }
  in6_addr v6{};
  return inet_pton(AF_INET6, text.c_str(), &v6) == 1 && IN6_IS_ADDR_LOOPBACK(&v6);
}

// The port after the host: digits only, not empty.
bool IsPort(std::string_view port) {
  return !port.empty() && port.find_first_not_of("0123456789") == std::string_view::npos;
}

}  // namespace

bool IsLocalAddress(std::string_view address) {
  // A Unix-domain socket is node-local by construction.
  if (address.starts_with("unix:")) return address.size() > 5;
  for (std::string_view scheme : std::array<std::string_view, 3>{"dns:///", "ipv4:", "ipv6:"}) {
    if (address.starts_with(scheme)) {
      address.remove_prefix(scheme.size());
      break;
    }
  }
  if (address.starts_with("[")) {
    size_t close = address.find("]:");
    if (close == std::string_view::npos) return false;
    return IsLoopbackHost(address.substr(1, close - 1)) && IsPort(address.substr(close + 2));
  }
  size_t colon = address.rfind(':');
  if (colon == std::string_view::npos) return false;
  std::string_view host = address.substr(0, colon);
  // A bare IPv6 address has colons in the host too; it must be bracketed.
  if (host.find(':') != std::string_view::npos) return false;
  return IsLoopbackHost(host) && IsPort(address.substr(colon + 1));
}

}  // namespace tiletune::bench
