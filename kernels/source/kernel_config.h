#pragma once

#include <cstdint>
#include <string>
#include <string_view>

namespace tiletune::kernels {

// One member of a generated kernel's `struct Config` (the variant's
// parameters as compile-time constants), written the same way by the host
// and the GPU source builders.
inline std::string ConfigConstant(std::string_view type, std::string_view name, int64_t value) {
  return "  static constexpr " + std::string(type) + " " + std::string(name) + " = " +
         std::to_string(value) + ";\n";
}
inline std::string ConfigConstant(std::string_view type, std::string_view name, bool value) {
  return "  static constexpr " + std::string(type) + " " + std::string(name) + " = " +
         (value ? "true" : "false") + ";\n";
}

}  // namespace tiletune::kernels
