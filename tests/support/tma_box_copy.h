#pragma once

#include <cstdint>
#include <string>

#include "tiletune/v1/records.pb.h"

namespace tiletune::testing {

// How tma_box_copy.cu is compiled: the element size, the box it copies
// and the box's swizzle (0, 32, 64, 128 bytes; then box_inner *
// element_bytes equals it).
struct TmaBoxCopy {
  int element_bytes = 2;
  int box_inner = 64;
  int box_rows = 16;
  int swizzle_bytes = 128;
};

// The kernel's source for `copy` (its entry is "tma_box_copy"), which
// includes ops/gemm/gemm_args.h: the device headers' path.
std::string TmaBoxCopySource(const TmaBoxCopy& copy);

// Its launch geometry for a of batch x m x k: one block per box, 128
// threads, the map of `a` at tt_gemm_tma_args.a_map with the box and
// swizzle, argument_bytes sizeof(tt_gemm_tma_args).
v1::LaunchGeometry TmaBoxCopyLaunch(const TmaBoxCopy& copy, int64_t m, int64_t k, int64_t batch);

}  // namespace tiletune::testing
