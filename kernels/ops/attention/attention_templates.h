#pragma once

#include <memory>

#include "kernels/core/kernel_template.h"
#include "kernels/source/gpu_source.h"

namespace tiletune::kernels::attention {

// attention's kernel templates. host_attention_online: blocks of queries
// against blocks of keys with an online softmax, on the host (CPU); its
// baseline is the straightforward per-query kernel.
std::unique_ptr<KernelTemplate> MakeHostAttention();
// gpu_attention_flash on one vendor (NVIDIA: mma.sync; AMD: MFMA wave64):
// FlashAttention-2's schedule on the tile library, causal key tiles
// skipped; its baseline is one warp per query (gpu_attention_warp_rows).
std::unique_ptr<KernelTemplate> MakeGpuFlashAttention(const gpu::GpuVendor& vendor);

}  // namespace tiletune::kernels::attention
