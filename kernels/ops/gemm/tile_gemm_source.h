#pragma once

#include <optional>
#include <string>
#include <string_view>

#include "kernels/core/kernel_template.h"
#include "kernels/ops/gemm/tile_gemm_space.h"
#include "kernels/source/gpu_source.h"

namespace tiletune::kernels::gemm {

inline constexpr std::string_view kTileGemmName = "tile_gemm";
inline constexpr std::string_view kNaiveGemmName = "gemm_naive";

// Why the tile GEMM kernels cannot serve the key, or nullopt. They take bf16
// or f16 operands, or f32 ones when the key allows tf32 (a target without
// tf32 tensor cores says so itself: tile_gemm_template.cpp), and write bf16,
// f16 or f32; the chain's tensors (bias,
// residual_add) share one dtype; a cast must name the output dtype (the
// store rounds to it); the batch fits grid z (65535).
std::optional<std::string> UnsupportedTileGemm(const v1::KernelKey& key);

// The source of one variant of the tile GEMM (ops/gemm/device/gemm_mma_multistage.h,
// gemm_sm90a_wgmma.h) for the key on the target: its Config, the key's epilogue chain, one extern
// "C" entry named after the variant, the launch geometry and every tile-library header.
// `planted_fault` is 0 or one of kPlantedFault's: 1 never ends, 2 writes far past the output, 3
// adds 1 to every output. Throws std::invalid_argument when the variant lacks a parameter.
KernelSource TileGemmSource(const v1::KernelKey& key, const GemmTarget& target,
                            const Variant& variant, int64_t planted_fault);

// What every GEMM kernel's Config starts with (every GEMM source builds on
// it): its element types and operand layouts; tanh approximated where the
// output is 16-bit.
gpu::GpuKernelSpec GemmSpec(const v1::KernelKey& key, const GemmProblem& p,
                            std::string_view kernel_name, std::string header, std::string function);

// The naive GEMM (gemm_naive.h) with the same epilogue and rounding.
KernelSource NaiveGemmSource(const v1::KernelKey& key, const GemmTarget& target);

inline constexpr std::string_view kEpiloguePassName = "gemm_epilogue_pass";

// The element-wise pass (gemm_epilogue_pass.h) that applies the key's whole
// chain in place to the output a vendor library GEMM wrote.
KernelSource EpiloguePassSource(const v1::KernelKey& key, const GemmTarget& target);

}  // namespace tiletune::kernels::gemm
