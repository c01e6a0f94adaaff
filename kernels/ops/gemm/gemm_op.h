#pragma once

#include <optional>
#include <string>
#include <string_view>

#include "kernels/core/op_spec.h"

namespace tiletune::kernels::gemm {

inline constexpr std::string_view kOpName = "gemm";

// gemm: C[batch, m, n] = A[batch, m, k] B[batch, k, n], then the chain.
const OpSpec& GemmOp();

// Whether the key gates its product (KernelKey.gate).
bool Gated(const v1::KernelKey& key);

// Why `family` cannot serve the key: it has a gate, which the family does
// not compute; nullopt for a key without one.
std::optional<std::string> UnsupportedGate(const v1::KernelKey& key, std::string_view family);

}  // namespace tiletune::kernels::gemm
