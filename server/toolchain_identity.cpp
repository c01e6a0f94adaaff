#include "server/toolchain_identity.h"

#include <array>
#include <string_view>
#include <utility>

#include "runtime/content_hash.h"

namespace tiletune::server {
namespace {

// The compared versions with the names messages use for them; views, as
// every lookup of a record compares them.
std::array<std::pair<const char*, std::string_view>, 4> Versions(const v1::Toolchain& t) {
  return {{{"driver", t.driver_version()},
           {"runtime", t.runtime_version()},
           {"compiler", t.compiler_version()},
           {"kernel library", t.kernel_library_version()}}};
}

}  // namespace

std::string ToolchainFingerprint(const v1::Toolchain& toolchain) {
  runtime::ContentHasher hasher;
  for (const auto& entry : Versions(toolchain)) hasher.UpdateField(entry.second);
  return hasher.HexDigest().substr(0, 16);
}

std::optional<std::string> ToolchainDifference(const v1::Toolchain& measured_with,
                                               const v1::Toolchain& current) {
  const auto then = Versions(measured_with);
  const auto now = Versions(current);
  std::string text;
  for (size_t i = 0; i < then.size(); ++i) {
    if (then[i].second == now[i].second) continue;
    if (!text.empty()) text += "; ";
    text += std::string(then[i].first) + " " +
            std::string(then[i].second.empty() ? "-" : then[i].second) +
            " != " + std::string(now[i].second.empty() ? "-" : now[i].second);
  }
  if (text.empty()) return std::nullopt;
  return text;
}

}  // namespace tiletune::server
