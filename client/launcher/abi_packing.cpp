#include "client/launcher/abi_packing.h"

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <set>

namespace tiletune::launcher {
namespace {

// A daemon from before KernelAbi.tensor_alignment sends 0; its kernels
// assume what every tiletune kernel does (TT_TENSOR_ALIGNMENT).
constexpr int64_t kAlignmentBeforeItWasServed = 16;
// cuLaunchKernel's classic limit on a kernel's parameters.
constexpr int64_t kMaxStructBytes = 4096;

int64_t BytesOf(v1::AbiField::Kind kind, int64_t max_chain) {
  switch (kind) {
    case v1::AbiField::KIND_TENSOR: return sizeof(void*);
    case v1::AbiField::KIND_INT64: return sizeof(long long);
    case v1::AbiField::KIND_FLOAT32: return sizeof(float);
    // const void* tensors[max_chain]; float scalars[max_chain];
    case v1::AbiField::KIND_CHAIN: return max_chain * (sizeof(void*) + sizeof(float));
    default: return -1;
  }
}

int64_t TensorAlignment(const v1::KernelAbi& abi) {
  return abi.tensor_alignment() > 0 ? abi.tensor_alignment() : kAlignmentBeforeItWasServed;
}

template <class T>
void Put(PackedArgs& packed, int64_t offset, T value) {
  std::memcpy(static_cast<char*>(packed.data()) + offset, &value, sizeof(T));
}

std::string Shape(const google::protobuf::RepeatedField<int64_t>& shape) {
  std::string text = "[";
  for (int64_t size : shape) text += (text.size() > 1 ? ", " : "") + std::to_string(size);
  return text + "]";
}

void CheckAligned(const std::string& name, const void* address, int64_t alignment) {
  if (reinterpret_cast<uintptr_t>(address) % static_cast<uintptr_t>(alignment) == 0) return;
  char hex[32];
  std::snprintf(hex, sizeof(hex), "%p", address);
  throw LaunchError(name, std::string("address ") + hex + " is not aligned to " +
                              std::to_string(alignment) +
                              " bytes, which the kernel's vector accesses need");
}

// Names given that the struct has no field of that kind for.
template <class Value>
void RefuseUnknown(const std::map<std::string, Value>& given, const v1::KernelAbi& abi,
                   v1::AbiField::Kind kind, const char* what) {
  std::set<std::string> known;
  std::string listed;
  for (const v1::AbiField& field : abi.fields()) {
    if (field.kind() != kind) continue;
    known.insert(field.name());
    listed += (listed.empty() ? "" : ", ") + field.name();
  }
  for (const auto& [name, value] : given) {
    if (known.count(name) == 0) {
      throw LaunchError(name, std::string("no ") + what + " of that name in " + abi.struct_name() +
                                  " (its " + what + "s: " + (listed.empty() ? "none" : listed) +
                                  ")");
    }
  }
}

std::string SlotName(const v1::AbiField& chain, int slot) {
  return "chain[" + std::to_string(slot) + "] (" + chain.chain(slot).op() + ")";
}

// Slots given that do not exist or read no tensor (scalar).
template <class Value>
void RefuseUnreadSlots(const std::map<int, Value>& given, const v1::AbiField* chain,
                       bool (v1::ChainSlot::*reads)() const, const char* what) {
  for (const auto& [slot, value] : given) {
    const std::string name = "chain[" + std::to_string(slot) + "]";
    if (!chain || slot < 0 || slot >= chain->chain_size()) {
      throw LaunchError(name, std::string("the kernel's chain has ") +
                                  std::to_string(chain ? chain->chain_size() : 0) + " slots");
    }
    if (!(chain->chain(slot).*reads)()) {
      throw LaunchError(SlotName(*chain, slot), std::string("reads no ") + what);
    }
  }
}

void PackChain(const v1::AbiField& chain, const v1::KernelAbi& abi, const LaunchArgs& args,
               PackedArgs& packed) {
  const int64_t tensors_at = chain.offset();
  const int64_t scalars_at = chain.offset() + abi.max_chain() * int64_t{sizeof(void*)};
  for (int i = 0; i < chain.chain_size(); ++i) {
    const v1::ChainSlot& slot = chain.chain(i);
    if (slot.tensor()) {
      const auto given = args.chain_tensors.find(i);
      if (given == args.chain_tensors.end() || !given->second) {
        throw LaunchError(SlotName(chain, i),
                          "reads a tensor of shape " + Shape(slot.shape()) + "; none given");
      }
      CheckAligned(SlotName(chain, i), given->second, TensorAlignment(abi));
      Put(packed, tensors_at + i * int64_t{sizeof(void*)}, given->second);
    }
    if (slot.scalar()) {
      const auto given = args.chain_scalars.find(i);
      if (given == args.chain_scalars.end()) {
        throw LaunchError(SlotName(chain, i), "reads a scalar; none given");
      }
      Put(packed, scalars_at + i * int64_t{sizeof(float)}, given->second);
    }
  }
}

}  // namespace

std::optional<std::string> UnsupportedAbi(const v1::KernelAbi& abi) {
  if (abi.version() < kOldestKnownAbiVersion || abi.version() > kNewestKnownAbiVersion) {
    return "launch ABI version " + std::to_string(abi.version()) +
           " is not one this launcher knows (" + std::to_string(kOldestKnownAbiVersion) + " to " +
           std::to_string(kNewestKnownAbiVersion) + ")";
  }
  if (abi.struct_bytes() <= 0 || abi.struct_bytes() > kMaxStructBytes) {
    return abi.struct_name() + " of " + std::to_string(abi.struct_bytes()) + " bytes";
  }
  if (abi.struct_alignment() > 8) {
    return abi.struct_name() + " aligned to " + std::to_string(abi.struct_alignment()) +
           " bytes; this launcher packs at most 8";
  }
  const int64_t alignment = abi.tensor_alignment();
  if (alignment < 0 || (alignment & (alignment - 1)) != 0) {
    return "tensor_alignment " + std::to_string(alignment) + " is not a power of two";
  }
  if (abi.max_chain() < 0 || abi.max_chain() > 64) {
    return "max_chain " + std::to_string(abi.max_chain());
  }
  for (const v1::AbiField& field : abi.fields()) {
    const int64_t bytes = BytesOf(field.kind(), abi.max_chain());
    const std::string where = abi.struct_name() + "." + field.name();
    if (bytes < 0) return where + ": kind " + std::to_string(field.kind()) + " is not one known";
    if (field.bytes() != bytes) {
      return where + ": " + std::to_string(field.bytes()) + " bytes; its kind has " +
             std::to_string(bytes);
    }
    if (field.offset() < 0 || field.offset() + bytes > abi.struct_bytes() ||
        field.offset() % (field.kind() == v1::AbiField::KIND_FLOAT32 ? 4 : 8) != 0) {
      return where + ": offset " + std::to_string(field.offset()) + " does not fit the struct";
    }
    if (field.chain_size() > abi.max_chain()) {
      return where + ": " + std::to_string(field.chain_size()) + " slots, more than max_chain";
    }
  }
  return std::nullopt;
}

PackedArgs PackArgs(const v1::KernelAbi& abi, const LaunchArgs& args, int64_t argument_bytes) {
  RefuseUnknown(args.tensors, abi, v1::AbiField::KIND_TENSOR, "tensor");
  RefuseUnknown(args.ints, abi, v1::AbiField::KIND_INT64, "integer");
  RefuseUnknown(args.floats, abi, v1::AbiField::KIND_FLOAT32, "float");
  const v1::AbiField* chain = nullptr;
  for (const v1::AbiField& field : abi.fields()) {
    if (field.kind() == v1::AbiField::KIND_CHAIN) chain = &field;
  }
  RefuseUnreadSlots(args.chain_tensors, chain, &v1::ChainSlot::tensor, "tensor");
  RefuseUnreadSlots(args.chain_scalars, chain, &v1::ChainSlot::scalar, "scalar");

  PackedArgs packed(static_cast<size_t>(std::max(abi.struct_bytes(), argument_bytes)));
  for (const v1::AbiField& field : abi.fields()) {
    switch (field.kind()) {
      case v1::AbiField::KIND_TENSOR: {
        const auto given = args.tensors.find(field.name());
        const void* address = given == args.tensors.end() ? nullptr : given->second;
        if (address) {
          CheckAligned(field.name(), address, TensorAlignment(abi));
        } else if (!field.may_be_null()) {
          throw LaunchError(field.name(), "the kernel needs this tensor, of shape " +
                                              Shape(field.shape()) + "; none given");
        }
        Put(packed, field.offset(), address);
        break;
      }
      case v1::AbiField::KIND_INT64: {
        const auto given = args.ints.find(field.name());
        if (given != args.ints.end() && given->second != field.value()) {
          throw LaunchError(field.name(), std::to_string(given->second) +
                                              "; the kernel was built for " +
                                              std::to_string(field.value()));
        }
        Put(packed, field.offset(), static_cast<long long>(field.value()));
        break;
      }
      case v1::AbiField::KIND_FLOAT32: {
        const auto given = args.floats.find(field.name());
        Put(packed, field.offset(),
            given != args.floats.end() ? given->second : static_cast<float>(field.default_value()));
        break;
      }
      case v1::AbiField::KIND_CHAIN: PackChain(field, abi, args, packed); break;
      default: break;  // refused by UnsupportedAbi before any kernel is loaded
    }
  }
  return packed;
}

}  // namespace tiletune::launcher
