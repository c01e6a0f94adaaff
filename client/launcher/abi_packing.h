#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "client/launcher/kernel_handle.h"
#include "tiletune/v1/artifacts.pb.h"

namespace tiletune::launcher {

// The ABI versions this launcher packs (docs/kernel-abi.md, "Version"):
// each op's struct has its own (gemm's 3 added b_up, the others are at 2).
inline constexpr int kOldestKnownAbiVersion = 2, kNewestKnownAbiVersion = 3;

// The entry's argument struct filled for one call: the bytes a GPU kernel
// takes by value and a host kernel's entry points to. Word storage keeps
// the struct's 8-byte fields aligned.
class PackedArgs {
 public:
  explicit PackedArgs(size_t bytes) : words_((bytes + 7) / 8, 0), bytes_(bytes) {}
  void* data() { return words_.data(); }
  size_t size() const { return bytes_; }

 private:
  std::vector<uint64_t> words_;
  size_t bytes_;
};

// Why this launcher cannot fill `abi`: a version it does not know, or a
// field that does not fit the struct or its kind's size; nullopt when it can.
// Checked once, before a kernel of that ABI is loaded.
std::optional<std::string> UnsupportedAbi(const v1::KernelAbi& abi);

// `args` laid out as `abi` says, field by field (one function for every
// format), in an argument of `argument_bytes` where that is longer than the
// struct (a TMA kernel's, whose tensor maps follow the struct: left zero
// here). Throws LaunchError naming the field: a tensor the kernel needs
// that is missing or null, an address not aligned to abi.tensor_alignment, a
// chain slot's tensor or scalar missing or given to a slot that reads none,
// an integer other than the key's, a name the struct does not have.
PackedArgs PackArgs(const v1::KernelAbi& abi, const LaunchArgs& args, int64_t argument_bytes = 0);

}  // namespace tiletune::launcher
