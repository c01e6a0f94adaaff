#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "kernels/tt/kernel_args.h"
#include "tiletune/v1/kernel_key.pb.h"

namespace tiletune::kernels {

// How the fusion planner may join an op with its neighbours: a matmul
// starts a kernel of its own, a row reduction takes the element-wise ops
// before it as its prologue, element-wise ops join any kernel's chain, and
// attention is the one kernel of matmul -> scale -> mask -> softmax ->
// matmul.
enum class FusionKind { kMatmul, kRowReduction, kElementwise, kAttention };

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

// One dimension of an op's key: its name in KernelKey.shape, which is also
// the name of the launch ABI's field that carries it.
struct DimArg {
  std::string_view name;
  bool required;
  // Size when the key leaves the dimension out; an optional dimension at
  // this size is left out of the normalized key. 0 for required ones.
  int64_t default_size;
};

// One tensor of an op: its name (in KernelKey.layouts, messages and the
// launch ABI's field that carries it), its role and the key dims it spans
// outermost first. Inputs, weights and shifts are read in the key's input
// dtype, outputs written in its output dtype.
struct TensorArg {
  std::string_view name;
  TensorRole role;
  std::vector<std::string_view> dims;
  LayoutRule layout = LayoutRule::kNone;
};

// What a field of an op's kernel argument struct holds.
enum class AbiKind {
  kTensor,   // a pointer: one of the op's tensors, or prologue_out
  kInt64,    // long long: a dim of the key or a leading dimension
  kFloat32,  // float: a runtime scalar of the op (the norms' eps)
  kChain,    // tt_chain_args: the prologue's, then the chain's arguments
};

// Bytes of a field of `kind`.
constexpr size_t AbiFieldBytes(AbiKind kind) {
  switch (kind) {
    case AbiKind::kTensor: return sizeof(void*);
    case AbiKind::kInt64: return sizeof(long long);
    case AbiKind::kFloat32: return sizeof(float);
    case AbiKind::kChain: return sizeof(tt_chain_args);
  }
  return 0;
}

struct AbiField {
  std::string_view name;
  AbiKind kind;
  size_t offset;  // in the struct
};

// The tensor field every row reduction's struct has beside its OpSpec
// tensors: x after the prologue, laid out like the output in the input
// dtype, written where the key sets write_prologue_output (null otherwise).
inline constexpr std::string_view kPrologueOutputField = "prologue_out";

// An op's launch ABI: the C struct of kernels/ops/<op>/<op>_args.h that
// every kernel of the op takes (by value on GPUs, through a pointer on the
// host), field by field in struct order. Fields share their names with the
// op's dims and tensors; the other fields are prologue_out (a row
// reduction's x after the prologue), leading dimensions (lda, ldb, ldc; a
// row op's ldx, ldy), runtime scalars (eps) and `chain`. docs/kernel-abi.md
// spells out each op's.
struct LaunchAbi {
  // Bumped whenever a field of the op's struct is added, moved or changes
  // meaning; a client refuses a kernel whose version it does not know.
  int version;
  std::string_view struct_name;  // "tt_gemm_args"
  std::string_view header;       // "ops/gemm/gemm_args.h", as kernels include it
  size_t size;                   // sizeof the struct
  size_t alignment;              // alignof the struct
  std::vector<AbiField> fields;
};

// The AbiField of `field` of the C struct `type`, its offset taken from the
// struct itself so that the registration cannot drift from the header.
#define TT_ABI_FIELD(type, field, kind)                               \
  ::tiletune::kernels::AbiField {                                     \
#field, ::tiletune::kernels::AbiKind::kind, offsetof(type, field) \
  }
// The LaunchAbi head of the C struct `type` of version `version`.
#define TT_LAUNCH_ABI(version, type, header) version, #type, header, sizeof(type), alignof(type)

// A problem's arguments by the names of the launch ABI's fields: what the
// worker draws and uploads, and what the float64 references read.
using NamedTensors = std::map<std::string, std::vector<float>, std::less<>>;
using NamedInts = std::map<std::string, int64_t, std::less<>>;
using NamedFloats = std::map<std::string, double, std::less<>>;

// The host-side arguments of one problem as a reference reads them: the
// op's input tensors (dense f32, batch entries one after another, as the
// kernels read them), its kInt64 fields (dims, leading dimensions) and its
// kFloat32 fields. Accessors throw std::out_of_range naming a field the
// problem lacks.
struct ReferenceArgs {
  const v1::KernelKey& key;  // normalized
  const NamedTensors& tensors;
  const NamedInts& ints;
  const NamedFloats& floats;

  std::span<const float> Tensor(std::string_view name) const;
  int64_t Int(std::string_view name) const;
  double Float(std::string_view name) const;
};

// The float64 reference of a matmul: output rows `rows` (ascending, all of
// one batch entry; row r of entry e is e * m + r) into `out`
// (rows.size() x n).
using MatmulReference = void (*)(const ReferenceArgs& args, std::span<const int64_t> rows,
                                 double* out);

// The float64 reference of a row or element-wise op: one row x (after the
// prologue) into y, both cols long; `args` for what it reads besides x
// (a norm's w, b and eps).
using RowReference = void (*)(const ReferenceArgs& args, std::span<const double> x,
                              std::span<double> y);

// The float64 reference of attention: rows `rows` of o (ascending), each
// one (batch, query position, head) row of head_dim values, numbered as o
// is stored densely in the key's sequence layout, into `out`
// (rows.size() x head_dim). Each row is computed on its own, so a large
// problem is checked on sampled query positions. Where `row_values` is not
// null, also each row's log-sum-exp (-inf for a row that sees no key) into
// row_values[i].
using AttentionReference = void (*)(const ReferenceArgs& args, std::span<const int64_t> rows,
                                    double* out, double* row_values);

// An input only some keys have (attention's additive mask, gemm's b_up), in
// the key's input dtype: its ABI field, its elements (dense), every how
// many-th element the worker draws as -inf (a hidden key), 0 for none, and
// the op tensor it is shaped and laid out like (b_up: b), which the served
// ABI then describes it as; empty where none.
struct OptionalInput {
  std::string name;
  int64_t elements = 0;
  int64_t hidden_every = 0;
  std::string_view shaped_like;
};

// A second output of one f32 value per row of the op's output, written
// where the key asks for it (attention's lse): its ABI field, whether the
// key asks, and which of its elements row `row` of the output writes.
struct RowValuesOutput {
  std::string_view field;
  bool (*written)(const v1::KernelKey& key);
  int64_t (*element)(const ReferenceArgs& args, int64_t row);
};

// The leading dimensions of a key's dense tensors, by ABI field name (lda,
// ldb, ldc for gemm; ldx, ldy for row reductions; attention's strides), into
// `ints`.
using DenseLeadingDims = void (*)(const v1::KernelKey& key, NamedInts& ints);

// Everything the daemon knows about one op, registered once from the op's
// folder (kernels/ops/<op>/<op>_op.cpp) and read through op_registry.h.
struct OpSpec {
  std::string_view name;  // KernelKey.op
  FusionKind fusion;
  LaunchAbi abi;
  std::vector<DimArg> dims;        // in the order messages list them
  std::vector<TensorArg> tensors;  // inputs in argument order, then outputs

  // Validation beyond the dims and tensors above. Empty when the op takes a
  // prologue; else why not (the message says "<op> takes no prologue: ...").
  std::string_view no_prologue_reason;
  bool allows_tf32 = false;  // f32 inputs may be read as tf32
  // The op's own rules on a key whose dims are valid (attention's head dims
  // and head counts), or null: the failing field's path below the key
  // ("shape[2].size") and why.
  std::optional<std::pair<std::string, std::string>> (*key_rules)(const v1::KernelKey& key) =
      nullptr;

  // Floating-point operations of the op itself, prologue and chain left
  // out. `counts_chain_flops`: the prologue and chain are the op's whole
  // work, so its figures count one operation per element for each.
  int64_t (*flops)(const v1::KernelKey& key) = nullptr;
  bool counts_chain_flops = false;
  // Bytes of the tensors a key adds beside `tensors` (attention's mask and
  // lse), or null for none.
  int64_t (*optional_tensor_bytes)(const v1::KernelKey& key) = nullptr;
  // The inputs among them the key has, which the worker draws; null for
  // none.
  std::vector<OptionalInput> (*optional_inputs)(const v1::KernelKey& key) = nullptr;

  // The leading dimensions of dense tensors (null for an op whose ABI has
  // none) and the runtime scalars' values, for every kFloat32 field: what
  // the worker launches each kernel with.
  DenseLeadingDims leading_dims = nullptr;
  std::vector<std::pair<std::string_view, double>> scalars;

  // The float64 reference: `matmul_reference` for kMatmul,
  // `attention_reference` for kAttention, `row_reference` for the others.
  MatmulReference matmul_reference = nullptr;
  RowReference row_reference = nullptr;
  AttentionReference attention_reference = nullptr;
  // Its reference comes from `attention_reference`'s row_values.
  std::optional<RowValuesOutput> row_values;
};

}  // namespace tiletune::kernels
