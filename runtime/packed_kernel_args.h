#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "runtime/device_executor.h"

namespace tiletune::runtime {

// An op's launch ABI struct filled for one call: the bytes a GPU kernel
// takes by value (cuLaunchKernel/hipModuleLaunchKernel copy them) and a host
// kernel's entry points to. Word storage keeps it aligned like the struct.
class PackedKernelArgs {
 public:
  void* data() { return words_.data(); }
  const void* data() const { return words_.data(); }
  size_t size() const { return bytes_; }

 private:
  friend std::optional<std::string> PackKernelArgs(const KernelArguments& args,
                                                   PackedKernelArgs* packed);
  std::vector<uint64_t> words_;
  size_t bytes_ = 0;
};

// Lays `args` out as args.op's launch ABI (OpSpec.abi), field by field by
// name, the same on every backend; with tensor maps, argument_bytes long,
// the maps left zero for the executor to encode. The reason when args has
// no op, lacks a tensor of the op (prologue_out may be left out: null), an
// integer or float field, carries a longer chain than the struct holds, or
// tensor maps that do not fit after it (cuda::TensorMapLayoutError).
std::optional<std::string> PackKernelArgs(const KernelArguments& args, PackedKernelArgs* packed);

}  // namespace tiletune::runtime
