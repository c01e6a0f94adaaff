#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "kernels/core/op_spec.h"
#include "tiletune/v1/kernel_key.pb.h"
#include "tiletune/v1/records.pb.h"

namespace tiletune::runtime {

// Memory on the executor's device. A host pointer on the CPU; a device
// address (CUdeviceptr, hipDeviceptr_t) on GPUs.
struct DeviceBuffer {
  void* ptr = nullptr;
  size_t bytes = 0;
};

// The arguments of one kernel call, in the vocabulary of the problem rather
// than of a backend's calling convention (which the executor translates to).
// Named like the fields of the op's launch ABI struct (OpSpec.abi), which
// every executor packs them into (PackKernelArgs).
struct KernelArguments {
  const kernels::OpSpec* op = nullptr;  // the key's op
  // The op's tensors by name ("a", "x", "w"...), and prologue_out where the
  // key writes it.
  std::map<std::string, DeviceBuffer, std::less<>> tensors;
  kernels::NamedInts ints;                  // dims and leading dimensions ("m", "rows", "lda"...)
  kernels::NamedFloats floats;              // runtime scalars ("eps")
  std::vector<DeviceBuffer> chain_tensors;  // per prologue op, then per chain op; empty where none
  std::vector<double> chain_scalars;        // likewise (scale)

  // The address of tensor `name`, null when args has none.
  void* TensorPtr(std::string_view name) const {
    const auto it = tensors.find(name);
    return it == tensors.end() ? nullptr : it->second.ptr;
  }

  // How a GPU kernel is launched (the host executor ignores these).
  std::array<uint32_t, 3> grid{1, 1, 1};
  std::array<uint32_t, 3> block{1, 1, 1};
  uint32_t shared_memory_bytes = 0;
  // TMA kernels (LaunchGeometry.tensor_maps, argument_bytes): the tensor
  // maps the kernel's argument carries after the op's struct, and the
  // argument's size; empty and 0 for other kernels. The CUDA executor
  // encodes them for `key`'s tensors; the others refuse them
  // (TensorMapsRefusal).
  google::protobuf::RepeatedPtrField<v1::TensorMapArgument> tensor_maps;
  int64_t argument_bytes = 0;
  v1::KernelKey key;  // normalized: the tensors' dtypes, shapes and layouts
};

// A vendor library's call as the baseline of a key (cuBLASLt...), made by
// the executor itself. `pass_artifact_path` and `pass_entry` name the
// compiled element-wise pass that computes the key's chain after the
// library's plain product (needed where the library's own epilogue cannot
// express the chain, allowed where it can); both empty: the library
// computes the whole key.
struct VendorCall {
  std::string library;
  v1::KernelKey key;
  std::string pass_artifact_path;
  std::string pass_entry;
  // Which of the library's algorithms runs: its heuristic's
  // `heuristic_index`-th of the `heuristic_requested` asked for, or `chosen`
  // when set (one an earlier call ran: VendorAlgorithmRun).
  int heuristic_requested = 1;
  int heuristic_index = 0;
  std::optional<v1::VendorAlgorithm> chosen;
};

// Runs compiled kernels on one device for the benchmark worker: memory,
// loading, launching and timing. The worker's validation and measurement
// logic is written against this interface only.
//
// Implementations: host::HostExecutor (dlopen + a direct call). CUDA and HIP
// executors plug in through OpenDeviceExecutor: they load a cubin/hsaco
// module (cuModuleLoadData / hipModuleLoadData), launch with the grid and
// block of the variant, time with events and flush L2 by writing a buffer
// larger than it.
class DeviceExecutor {
 public:
  virtual ~DeviceExecutor() = default;
  virtual std::string_view backend() const = 0;
  // SMs (CUDA), CUs (HIP) or CPU cores of the device: what a persistent
  // grid is sized by.
  virtual int compute_units() const = 0;

  // Throws std::bad_alloc when the device is out of memory.
  virtual DeviceBuffer Allocate(size_t bytes) = 0;
  // Frees every buffer Allocate returned.
  virtual void ReleaseAll() = 0;
  virtual void CopyIn(const DeviceBuffer& dst, const void* src, size_t bytes) = 0;
  virtual void CopyOut(void* dst, const DeviceBuffer& src, size_t bytes) = 0;

  // Loads a compiled artifact and resolves `entry`; the reason on failure.
  // One kernel is loaded at a time; Load replaces the previous one.
  virtual std::optional<std::string> Load(const std::string& artifact_path,
                                          const std::string& entry) = 0;
  virtual void Unload() = 0;
  // Loads a vendor call in place of a kernel: Launch and TimedLaunch then
  // run (and time) the call and its pass together; Unload or Load drops it.
  // The reason on failure. By default: this backend calls no vendor library.
  virtual std::optional<std::string> LoadVendor(const VendorCall& call);
  // The algorithm the loaded vendor call ran at its last launch; nullopt
  // before one, and for a library with no algorithms to choose (the default).
  virtual std::optional<v1::VendorAlgorithm> VendorAlgorithmRun() const;

  // Runs the loaded kernel once and waits for it; the reason on failure.
  virtual std::optional<std::string> Launch(const KernelArguments& args) = 0;
  // Like Launch, and reports the kernel's own run time in `seconds` (the
  // argument translation is not counted).
  virtual std::optional<std::string> TimedLaunch(const KernelArguments& args, double* seconds) = 0;
  // Evicts the kernel's data from the caches, so that the next launch starts
  // cold like a call inside a real model.
  virtual void FlushCaches() = 0;
};

// args' grid, block, shared memory and tensor maps from a kernel's launch
// geometry, a persistent grid sized for a device of `compute_units` SMs/CUs.
void SetLaunchGeometry(const v1::LaunchGeometry& launch, int compute_units, KernelArguments& args);

// Why the `backend` executor, which encodes no tensor maps (TMA is CUDA's,
// sm_90+), cannot launch with `args`; nullopt when they carry none.
std::optional<std::string> TensorMapsRefusal(std::string_view backend, const KernelArguments& args);

// The executor of `backend` for this process's device; nullptr with `why`
// when this build has none for it.
std::unique_ptr<DeviceExecutor> OpenDeviceExecutor(std::string_view backend, std::string* why);

}  // namespace tiletune::runtime
