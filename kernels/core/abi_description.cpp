#include "kernels/core/abi_description.h"

#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "kernels/core/chain_ops.h"
#include "kernels/core/kernel_key.h"
#include "kernels/core/op_registry.h"
#include "kernels/tt/kernel_args.h"

namespace tiletune::kernels {
namespace {

v1::AbiField::Kind KindOf(AbiKind kind) {
  switch (kind) {
    case AbiKind::kTensor: return v1::AbiField::KIND_TENSOR;
    case AbiKind::kInt64: return v1::AbiField::KIND_INT64;
    case AbiKind::kFloat32: return v1::AbiField::KIND_FLOAT32;
    case AbiKind::kChain: return v1::AbiField::KIND_CHAIN;
  }
  return v1::AbiField::KIND_UNSPECIFIED;
}

v1::AbiField::Role RoleOf(TensorRole role) {
  switch (role) {
    case TensorRole::kInput: return v1::AbiField::ROLE_INPUT;
    case TensorRole::kWeight: return v1::AbiField::ROLE_WEIGHT;
    case TensorRole::kShift: return v1::AbiField::ROLE_SHIFT;
    case TensorRole::kOutput: return v1::AbiField::ROLE_OUTPUT;
  }
  return v1::AbiField::ROLE_UNSPECIFIED;
}

void DescribeTensor(const v1::KernelKey& key, const OpSpec& spec, const TensorArg& tensor,
                    v1::AbiField& field) {
  field.set_role(RoleOf(tensor.role));
  field.set_dtype(tensor.role == TensorRole::kOutput ? key.output_dtype() : key.input_dtype());
  std::vector<std::string_view> dims = tensor.dims;
  // A BHSD key (attention's sequence_layout) stores [batch, heads, seq, d].
  if (key.sequence_layout() == v1::SEQUENCE_LAYOUT_BHSD && dims.size() == 4) {
    std::swap(dims[1], dims[2]);
  }
  for (std::string_view dim : dims) field.add_shape(DimOrDefault(key, spec, dim));
  field.set_layout(IsColMajor(key, tensor.name) ? v1::LAYOUT_COL_MAJOR : v1::LAYOUT_ROW_MAJOR);
}

void DescribeChain(const v1::KernelKey& key, const OpSpec& spec, v1::AbiField& field) {
  const TensorArg& output = OutputTensor(spec);
  std::vector<int64_t> output_shape;
  for (std::string_view dim : output.dims) output_shape.push_back(DimOrDefault(key, spec, dim));
  for (const v1::ChainOp& op : ChainArgumentOps(key)) {
    v1::ChainSlot& slot = *field.add_chain();
    slot.set_op(op.op());
    slot.set_scalar(ReadsScalar(op));
    switch (ChainTensorOf(op)) {
      case ChainTensor::kPerColumn: slot.add_shape(output_shape.back()); break;
      case ChainTensor::kLikeOutput:
        for (int64_t size : output_shape) slot.add_shape(size);
        break;
      case ChainTensor::kNone: continue;
    }
    slot.set_tensor(true);
    slot.set_dtype(op.dtype());
  }
}

// The op tensor an optional input the key has is shaped like (gemm's b_up
// of a gated key: b), or null.
const TensorArg* ShapedLike(const v1::KernelKey& key, const OpSpec& spec, std::string_view name) {
  if (!spec.optional_inputs) return nullptr;
  for (const OptionalInput& input : spec.optional_inputs(key)) {
    if (input.name == name && !input.shaped_like.empty()) {
      return FindTensor(spec, input.shaped_like);
    }
  }
  return nullptr;
}

}  // namespace

v1::KernelAbi DescribeLaunchAbi(const v1::KernelKey& raw_key, v1::KernelAbi::Passing passing) {
  if (const auto error = ValidateKernelKey(raw_key, KeyLimits{})) {
    throw std::invalid_argument("invalid key: " + error->ToString());
  }
  const v1::KernelKey key = NormalizeKernelKey(raw_key);
  if (key.op().empty()) throw std::invalid_argument("an op graph has no launch ABI of its own");
  const OpSpec& spec = OpSpecOf(key.op());
  const NamedInts ints = FixedInts(key, spec);
  const NamedFloats floats = DefaultFloats(spec);

  v1::KernelAbi abi;
  abi.set_version(spec.abi.version);
  abi.set_struct_name(std::string(spec.abi.struct_name));
  abi.set_struct_bytes(static_cast<int64_t>(spec.abi.size));
  abi.set_struct_alignment(static_cast<int64_t>(spec.abi.alignment));
  abi.set_max_chain(TT_MAX_CHAIN);
  abi.set_passing(passing);
  abi.set_tensor_alignment(TT_TENSOR_ALIGNMENT);
  for (const AbiField& f : spec.abi.fields) {
    v1::AbiField& field = *abi.add_fields();
    field.set_name(std::string(f.name));
    field.set_kind(KindOf(f.kind));
    field.set_offset(static_cast<int64_t>(f.offset));
    field.set_bytes(static_cast<int64_t>(AbiFieldBytes(f.kind)));
    switch (f.kind) {
      case AbiKind::kTensor:
        if (const TensorArg* tensor = FindTensor(spec, f.name)) {
          DescribeTensor(key, spec, *tensor, field);
        } else if (f.name == kPrologueOutputField) {
          DescribeTensor(key, spec, OutputTensor(spec), field);
          field.set_role(v1::AbiField::ROLE_PROLOGUE_OUTPUT);
          field.set_dtype(key.input_dtype());
          field.set_may_be_null(!key.write_prologue_output());
        } else if (const TensorArg* like = ShapedLike(key, spec, f.name)) {
          DescribeTensor(key, spec, *like, field);
        } else {
          // A tensor only some keys have (attention's mask and lse), which
          // no served kernel of these keys reads: null.
          field.set_may_be_null(true);
        }
        break;
      case AbiKind::kInt64: field.set_value(ints.at(std::string(f.name))); break;
      case AbiKind::kFloat32: field.set_default_value(floats.at(std::string(f.name))); break;
      case AbiKind::kChain: DescribeChain(key, spec, field); break;
    }
  }
  return abi;
}

}  // namespace tiletune::kernels
