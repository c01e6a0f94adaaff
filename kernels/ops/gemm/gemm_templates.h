#pragma once

#include <memory>
#include <string_view>

#include "kernels/core/kernel_template.h"
#include "kernels/ops/gemm/tile_gemm_space.h"
#include "kernels/source/gpu_source.h"

namespace tiletune::kernels::gemm {

// The vendor gap of every AMD GEMM baseline (Baseline.vendor_gap): a naive
// kernel holds the slot of the libraries users run there.
inline constexpr std::string_view kNoAmdBlas =
    "hipBLASLt and rocBLAS, what users run on AMD, are not packaged for Debian 12; the baseline "
    "is a straightforward kernel";

// The tile GEMM on one GPU target (kSm90Target for "cuda", kGfx90aTarget
// for "hip"): tensor-core GEMM with the fused epilogue, bf16/f16 in, or f32
// read as tf32 on CUDA when the key allows it.
std::unique_ptr<KernelTemplate> MakeTileGemm(const GemmTarget& target);

// The CUDA families beside it (tma_and_decode_gemm_space.h): tma_ws_gemm
// (sm_90a prefill), tma_decode_gemm (sm_90a decode), mma_decode_gemm (any
// NVIDIA GPU, decode).
std::unique_ptr<KernelTemplate> MakeTmaWsGemm();
std::unique_ptr<KernelTemplate> MakeTmaDecodeGemm();
std::unique_ptr<KernelTemplate> MakeMmaDecodeGemm();

// gpu_gemm_tiled: the SIMT-core GEMM of the f32 keys the tile GEMM does not
// serve, on one GPU vendor.
std::unique_ptr<KernelTemplate> MakeSimtGemm(const gpu::GpuVendor& vendor);

// host_gemm_blocked: the CPU GEMM (cache-blocked, packed, register-blocked).
std::unique_ptr<KernelTemplate> MakeHostGemmBlocked();

// host_gemm_rowwise: the CPU GEMM that streams rows without packing.
std::unique_ptr<KernelTemplate> MakeHostGemmRowwise();

}  // namespace tiletune::kernels::gemm
