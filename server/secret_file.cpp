#include "server/secret_file.h"

#include <cerrno>
#include <cstring>
#include <fstream>
#include <sstream>
#include <stdexcept>

namespace tiletune::server {

std::string ReadSecretFile(const std::string& setting, const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) {
    throw std::runtime_error(setting + ": cannot read " + path + ": " + std::strerror(errno));
  }
  std::ostringstream text;
  text << in.rdbuf();
  if (text.str().empty()) throw std::runtime_error(setting + ": " + path + " is empty");
  return text.str();
}

}  // namespace tiletune::server
