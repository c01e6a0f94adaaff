#pragma once

#include <cstdint>
#include <span>
#include <string_view>
#include <vector>

#include "tiletune/v1/kernel_key.pb.h"

namespace tiletune::kernels {

// How the fusion planner may join an op with its neighbours: a matmul
// starts a kernel of its own, a row reduction takes the element-wise ops
// before it as its prologue, element-wise ops join any kernel's chain.
enum class FusionKind { kMatmul, kRowReduction, kElementwise };

// What a tensor of an op is to it.
enum class TensorRole {
  kInput,   // read whole: gemm's A and B, a row op's x
  kWeight,  // per column, multiplies (a norm's gamma)
  kShift,   // per column, adds (layernorm's beta)
  kOutput,
};

// A key's layout rules for one tensor.
enum class LayoutRule {
  kNone,      // the key gives the tensor no layout
  kRowOnly,   // must be row-major (the op reduces along rows)
  kRowOrCol,  // either
};

// One dimension of an op's key: its name in KernelKey.shape and the
// tt_kernel_args / tt_host_args field that carries it.
struct DimArg {
  std::string_view name;
  bool required;
  // Size when the key leaves the dimension out; an optional dimension at
  // this size is left out of the normalized key. 0 for required ones.
  int64_t default_size;
  std::string_view abi_field;
};

// One tensor of an op: its name (in KernelKey.layouts and messages), its
// role, the key dims it spans outermost first, and the kernel argument
// field that carries it. Inputs, weights and shifts are read in the key's
// input dtype, outputs written in its output dtype.
struct TensorArg {
  std::string_view name;
  TensorRole role;
  std::vector<std::string_view> dims;
  std::string_view abi_field;
  LayoutRule layout = LayoutRule::kNone;
};

// The whole-problem operands of a matmul reference: dense, batched operands
// one after another, as tt_host_args lays them out.
struct MatmulReferenceArgs {
  std::span<const float> a, b;
  int64_t m = 0, n = 0, k = 0;
  int64_t lda = 0, ldb = 0;
  bool a_col_major = false, b_col_major = false;
};

// The float64 reference of a matmul: output rows `rows` (ascending, all of
// one batch entry; row r of entry e is e * m + r) into `out`
// (rows.size() x n).
using MatmulReference = void (*)(const MatmulReferenceArgs& args, std::span<const int64_t> rows,
                                 double* out);

// What a row op reads besides its row: per-column weight and shift (empty
// where the op has none) and the norms' epsilon.
struct RowReferenceArgs {
  std::span<const float> weight, shift;
  double eps = 0;
};

// The float64 reference of a row or element-wise op: one row x (after the
// prologue) into y, both cols long.
using RowReference = void (*)(const RowReferenceArgs& args, std::span<const double> x,
                              std::span<double> y);

// Everything the daemon knows about one op, registered once from the op's
// folder (kernels/ops/<op>/<op>_op.cpp) and read through op_registry.h.
struct OpSpec {
  std::string_view name;  // KernelKey.op
  FusionKind fusion;
  // Version of the kernel argument ABI below (dims' and tensors'
  // abi_field): bumped whenever an op's fields change meaning. The fields
  // every op reads alike are not listed: prologue_out (a row reduction's x
  // after the prologue), chain_tensors and chain_scalars (per prologue op,
  // then per chain op), lda/ldb/ldc and eps.
  int abi_version;
  std::vector<DimArg> dims;        // in the order messages list them
  std::vector<TensorArg> tensors;  // inputs in argument order, then outputs

  // Validation beyond the dims and tensors above. Empty when the op takes a
  // prologue; else why not (the message says "<op> takes no prologue: ...").
  std::string_view no_prologue_reason;
  bool allows_tf32 = false;  // f32 inputs may be read as tf32

  // Floating-point operations of the op itself, prologue and chain left
  // out. `counts_chain_flops`: the prologue and chain are the op's whole
  // work, so its figures count one operation per element for each.
  int64_t (*flops)(const v1::KernelKey& key) = nullptr;
  bool counts_chain_flops = false;

  // The float64 reference: `matmul_reference` for kMatmul, `row_reference`
  // for the others.
  MatmulReference matmul_reference = nullptr;
  RowReference row_reference = nullptr;
};

}  // namespace tiletune::kernels
