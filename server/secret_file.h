#pragma once

#include <string>

namespace tiletune::server {

// Reads a key, certificate or token file named by a setting. Throws
// std::runtime_error naming the setting and the path, never the contents.
std::string ReadSecretFile(const std::string& setting, const std::string& path);

}  // namespace tiletune::server
