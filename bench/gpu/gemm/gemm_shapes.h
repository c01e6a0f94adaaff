#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "tiletune/v1/kernel_key.pb.h"

namespace tiletune::bench {

// One GEMM problem of the comparison: C (m x n, row-major, bf16) =
// A (m x k, row-major, bf16) * B (k x n, column-major: weights stored one
// output column after another), f32 accumulation.
struct GemmShape {
  int64_t m = 0, n = 0, k = 0;
};

// Operands and output: bf16 (the default comparison), or f32 with the
// key allowing tf32 (tile_gemm's float tiles on mma.sync .tf32 against
// cuBLASLt's CUBLAS_COMPUTE_32F_FAST_TF32).
enum class Precision { kBf16, kF32Tf32 };

// "bf16" or "f32-tf32", as --dtype spells them.
std::string PrecisionName(Precision precision);

// B as stored: column-major (x @ W.t(), the weights of F.linear; the
// default) or row-major (x @ W).
enum class BLayout { kColMajor, kRowMajor };

// What follows the product: nothing ("plain"); + bias[n] then GELU (tanh
// form) on every element, which cuBLASLt's GELU_BIAS epilogue computes; or
// that and then + a residual m x n, which its epilogue cannot (the residual
// would have to come before the activation); or the product gated by a
// second one, silu(A*B) * (A*B_up) (KernelKey.gate), which cuBLASLt computes
// as two calls and our epilogue pass.
enum class Epilogue { kPlain, kBiasGeluTanh, kBiasGeluTanhResidual, kSwiglu };

// "plain", "bias+gelu_tanh", "bias+gelu_tanh+residual", "swiglu".
std::string EpilogueName(Epilogue epilogue);

// Names as EpilogueName's, comma-separated (spaces allowed). Throws
// std::invalid_argument naming the entry that is none of them.
std::vector<Epilogue> ParseEpilogueList(const std::string& text);

// Issue 4's shapes: m in {16, 128, 4096} x (n, k) in {(4096, 4096),
// (14336, 4096), (4096, 14336), (6144, 4096)}, then two odd shapes whose
// sizes divide no tile, for correctness.
std::vector<GemmShape> DefaultShapes();

// "m,n,k;m,n,k..." (spaces allowed, empty entries skipped). Throws
// std::invalid_argument naming the entry that is not three positive integers.
std::vector<GemmShape> ParseShapeList(const std::string& text);

// The kernel key of a shape with an epilogue: `precision` in and out (and
// the bias), A row-major, B laid out as `b_layout`, f32 accumulation;
// normalized.
v1::KernelKey GemmKey(const GemmShape& shape, Epilogue epilogue, Precision precision,
                      BLayout b_layout);

// Whether this process checks each contender's whole output against the
// float64 reference: small problems only; larger ones are checked on the
// rows the worker samples (reference_rows.h).
bool ChecksWholeOutput(const GemmShape& shape);

}  // namespace tiletune::bench
