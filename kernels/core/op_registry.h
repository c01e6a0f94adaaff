#pragma once

#include <functional>
#include <string>
#include <string_view>
#include <vector>

#include "kernels/core/op_spec.h"

namespace tiletune::kernels {

// Every op this binary knows, in the order messages list them, each spec
// checked once (flops, one output, the reference of its fusion kind).
const std::vector<const OpSpec*>& AllOpSpecs();

// The list AllOpSpecs checks: defined above the ops, in
// kernels/registry/registered_ops.cpp, so that the core never includes an
// op's folder.
const std::vector<const OpSpec*>& RegisteredOps();

// The op named `op`, or null.
const OpSpec* FindOpSpec(std::string_view op);

// The op named `op`; throws std::invalid_argument for an unknown one.
const OpSpec& OpSpecOf(std::string_view op);

// The one op of `kind` (kMatmul, kElementwise): the kernel the fusion
// planner opens for a matmul or a run of element-wise graph ops.
const OpSpec& KernelOpFor(FusionKind kind);

// The names of the ops `pick` accepts, ", "-separated, in registry order:
// for messages.
std::string OpNamesWhere(const std::function<bool(const OpSpec&)>& pick);
// The names of the ops of `kind`, likewise.
std::string OpNames(FusionKind kind);
// The names of every op, likewise.
std::string OpNames();

// The op's tensor named `name`, or null.
const TensorArg* FindTensor(const OpSpec& spec, std::string_view name);
// The op's one output tensor (AllOpSpecs checks there is one).
const TensorArg& OutputTensor(const OpSpec& spec);
// The values the key fixes of the op's integer ABI fields: its dims (an
// optional one at its default size) and the dense tensors' leading
// dimensions (OpSpec.leading_dims). `key` is normalized.
NamedInts FixedInts(const v1::KernelKey& key, const OpSpec& spec);
// The op's float ABI fields at the values the daemon validates with.
NamedFloats DefaultFloats(const OpSpec& spec);

// The op's launch ABI field named `name`, or null.
const AbiField* FindAbiField(const OpSpec& spec, std::string_view name);
// Whether the op has a tensor of `role`.
bool HasTensor(const OpSpec& spec, TensorRole role);

}  // namespace tiletune::kernels
