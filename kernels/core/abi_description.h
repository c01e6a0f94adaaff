#pragma once

#include "tiletune/v1/artifacts.pb.h"
#include "tiletune/v1/kernel_key.pb.h"

namespace tiletune::kernels {

// The launch ABI of the key's op as a client fills it for this key: the
// op's struct (OpSpec.abi) field by field, each tensor with its role, dtype,
// shape and layout, each integer with the value the key fixes (its dims and
// dense leading dimensions), each float with the value the daemon validates
// with, and the chain's slots. Throws std::invalid_argument for an invalid
// key or an op graph.
v1::KernelAbi DescribeLaunchAbi(const v1::KernelKey& key, v1::KernelAbi::Passing passing);

}  // namespace tiletune::kernels
