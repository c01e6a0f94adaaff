#include "runtime/packed_kernel_args.h"

#include <algorithm>
#include <cstring>

#include "kernels/core/op_registry.h"
#include "kernels/tt/kernel_args.h"
#include "runtime/cuda/tensor_map.h"

namespace tiletune::runtime {
namespace {

template <class T>
void Put(PackedKernelArgs& packed, size_t offset, const T& value) {
  std::memcpy(static_cast<std::byte*>(packed.data()) + offset, &value, sizeof(T));
}

// The first name `named` gives that is no field of the op's struct, or
// nullopt: a misspelt name would otherwise leave its field zero.
template <class Map>
std::optional<std::string> UnknownName(const kernels::OpSpec& op, const Map& named) {
  for (const auto& [name, value] : named) {
    if (!kernels::FindAbiField(op, name)) return name;
  }
  return std::nullopt;
}

}  // namespace

std::optional<std::string> PackKernelArgs(const KernelArguments& args, PackedKernelArgs* packed) {
  if (!args.op) return std::string("the kernel arguments name no op");
  const kernels::LaunchAbi& abi = args.op->abi;
  const std::string where = std::string(abi.struct_name) + ".";
  for (const auto& unknown : {UnknownName(*args.op, args.tensors), UnknownName(*args.op, args.ints),
                              UnknownName(*args.op, args.floats)}) {
    if (unknown) return where + *unknown + " is no field of the struct";
  }
  if (args.chain_tensors.size() > TT_MAX_CHAIN || args.chain_scalars.size() > TT_MAX_CHAIN) {
    return "a chain of " +
           std::to_string(std::max(args.chain_tensors.size(), args.chain_scalars.size())) +
           " ops exceeds TT_MAX_CHAIN (" + std::to_string(TT_MAX_CHAIN) + ")";
  }
  if (auto error = cuda::TensorMapLayoutError(args.tensor_maps, args.argument_bytes,
                                              static_cast<int64_t>(abi.size))) {
    return *error;
  }
  // A TMA kernel's maps follow the struct, zero until the executor encodes them.
  const size_t bytes =
      args.tensor_maps.empty() ? abi.size : static_cast<size_t>(args.argument_bytes);
  packed->words_.assign((bytes + sizeof(uint64_t) - 1) / sizeof(uint64_t), 0);
  packed->bytes_ = bytes;
  for (const kernels::AbiField& field : abi.fields) {
    const std::string name(field.name);
    switch (field.kind) {
      case kernels::AbiKind::kTensor: {
        const auto it = args.tensors.find(field.name);
        if (it == args.tensors.end()) {
          if (kernels::FindTensor(*args.op, field.name)) return "no tensor for " + where + name;
          Put<const void*>(*packed, field.offset, nullptr);
        } else {
          Put<const void*>(*packed, field.offset, it->second.ptr);
        }
        break;
      }
      case kernels::AbiKind::kInt64: {
        const auto it = args.ints.find(field.name);
        if (it == args.ints.end()) return "no value for " + where + name;
        Put<long long>(*packed, field.offset, it->second);
        break;
      }
      case kernels::AbiKind::kFloat32: {
        const auto it = args.floats.find(field.name);
        if (it == args.floats.end()) return "no value for " + where + name;
        Put<float>(*packed, field.offset, static_cast<float>(it->second));
        break;
      }
      case kernels::AbiKind::kChain: {
        tt_chain_args chain{};
        for (size_t i = 0; i < args.chain_tensors.size(); ++i) {
          chain.tensors[i] = args.chain_tensors[i].ptr;
        }
        for (size_t i = 0; i < args.chain_scalars.size(); ++i) {
          chain.scalars[i] = static_cast<float>(args.chain_scalars[i]);
        }
        Put(*packed, field.offset, chain);
        break;
      }
    }
  }
  return std::nullopt;
}

}  // namespace tiletune::runtime
