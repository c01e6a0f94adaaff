#pragma once

#include <optional>
#include <string_view>

namespace tiletune::web {

// The web view's files (web/assets/: index.html, app.js, app.css), built
// into the binary; nullopt for any other name.
std::optional<std::string_view> EmbeddedAsset(std::string_view name);

}  // namespace tiletune::web
