#pragma once

#include <memory>

#include "gemm_space.h"
#include "kernels/kernel_template.h"

namespace tiletune::kernels::gemm {

// The tile GEMM on one GPU target (kSm90Target for "cuda", kGfx90aTarget
// for "hip"): tensor-core GEMM with the fused epilogue, bf16/f16 in, or f32
// read as tf32 on CUDA when the key allows it.
std::unique_ptr<KernelTemplate> MakeTileGemm(const GemmTarget& target);

}  // namespace tiletune::kernels::gemm
