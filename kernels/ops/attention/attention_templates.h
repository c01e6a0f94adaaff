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
// The sm_90a families (attention_sm90a_space.h): tma_ws_attention (TMA +
// wgmma prefill, warp-specialised) and decode_attention (q_len <= 16,
// split-KV over a cluster); CUDA only, empty spaces off sm_90a.
std::unique_ptr<KernelTemplate> MakeTmaWsAttention();
std::unique_ptr<KernelTemplate> MakeDecodeAttention();

}  // namespace tiletune::kernels::attention
