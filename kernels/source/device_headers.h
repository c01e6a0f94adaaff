#pragma once

#include <string>
#include <utility>
#include <vector>

namespace tiletune::kernels {

// Header name -> text, as a run-time compiler takes them.
using HeaderSet = std::vector<std::pair<std::string, std::string>>;

// Every header a generated GPU kernel may include: the tile vocabulary
// (kernels/tt/, kernels/tt/arch/) and every op's device headers
// (kernels/ops/<op>/device/), named by their path relative to kernels/
// ("tt/tile.h", "ops/gemm/device/gemm_sm90a_wgmma.h"), which is how they
// include each other. Every kernel gets the whole set, so that its cache key
// covers any header it may include.
const HeaderSet& DeviceHeaders();

// Likewise for the host backend: kernels/tt/host/ and every op's CPU headers
// (kernels/ops/<op>/cpu/).
const HeaderSet& HostHeaders();

}  // namespace tiletune::kernels
