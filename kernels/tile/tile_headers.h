#pragma once

#include <string>
#include <utility>
#include <vector>

namespace tiletune::kernels::tile {

// The tile library's device headers (kernels/tile/include/tt) and the two
// GPU headers it builds on (tt_device.h, tt_kernel_args.h from
// kernels/gpu/include), by include name, for a tile kernel's source.
// Include names are flat: tiletune-rtc hands headers to NVRTC and hipRTC by
// file name. Throws std::logic_error when one is not embedded.
std::vector<std::pair<std::string, std::string>> TileLibraryHeaders();

}  // namespace tiletune::kernels::tile
