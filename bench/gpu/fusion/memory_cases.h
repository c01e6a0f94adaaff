#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "tiletune/v1/kernel_key.pb.h"

namespace tiletune::bench {

// One memory-bound problem of issue 6: the kernel tiletune's planner makes of
// its op graph, the unfused sequence (the same graph with every intermediate
// wanted, so each op is its own kernel), and the bytes the fused kernel must
// move at the least (each input read once, each output written once).
struct MemoryCase {
  std::string name;
  std::vector<v1::KernelKey> fused;    // one kernel, or a plain key (the copy)
  std::vector<v1::KernelKey> unfused;  // empty when there is nothing to fuse
  int64_t bytes = 0;
};

// The copy that measures the memory's speed (an element-wise kernel with no
// ops), then softmax 16384x4096 and 4096x32768, layernorm, RMSNorm,
// residual + RMSNorm and scale + mask + softmax at 16384x4096, all f32;
// then softmax, RMSNorm and residual + RMSNorm at 16384x4096 in bf16; then
// residual + RMSNorm that also writes the sum (the residual stream), f32 and
// bf16 (unfused: an add kernel writing the sum, then RMSNorm reading it), and
// bf16 layernorm.
std::vector<MemoryCase> MemoryCases();

}  // namespace tiletune::bench
