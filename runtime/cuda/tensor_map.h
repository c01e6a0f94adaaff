#pragma once

#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <variant>
#include <vector>

#include "runtime/cuda/cuda_driver_api.h"
#include "runtime/device_executor.h"
#include "runtime/packed_kernel_args.h"
#include "tiletune/v1/artifacts.pb.h"
#include "tiletune/v1/records.pb.h"

namespace tiletune::runtime::cuda {

// TMA kernels' tensor maps (docs/kernel-abi.md, "TMA kernels"): the
// kernel's one by-value argument is the op's struct at byte 0, then one
// tt_tensor_map (a CUtensorMap) per LaunchGeometry.tensor_maps entry at its
// offset, argument_bytes in all. The worker's executor and the C++ launcher
// both plan and encode them here; client/python/tiletune/launch_abi.py and
// cuda_launcher.py are the Python twin.

using TensorMapArguments = google::protobuf::RepeatedPtrField<v1::TensorMapArgument>;

inline constexpr int64_t kTensorMapBytes = sizeof(CUtensorMap);
inline constexpr int64_t kTensorMapAlignment = alignof(CUtensorMap);
// cuLaunchKernel's classic limit on a kernel's parameters, on every driver
// and architecture (CUDA 12.1 raised it to 32764 bytes from Volta on).
inline constexpr int64_t kMaxArgumentBytes = 4096;

// Why `maps` cannot follow an op struct of `struct_bytes` in an argument of
// `argument_bytes`, naming the entry (tensor_maps[i]) and the rule: an
// argument_bytes without maps or maps without it, an argument past
// kMaxArgumentBytes, a map that is not on a 64-byte boundary, overlaps the
// struct or another map or ends past the argument, a box side outside
// 1..256, a swizzle other than 0, 32, 64 or 128 bytes. nullopt when it can.
std::optional<std::string> TensorMapLayoutError(const TensorMapArguments& maps,
                                                int64_t argument_bytes, int64_t struct_bytes);

// One map as cuTensorMapEncodeTiled takes it (rank 3, innermost first;
// interleave none, element strides 1, L2 promotion 256 B and zeros out of
// bounds are the same for every map).
struct TensorMapEncoding {
  int data_type = 0;  // CU_TENSOR_MAP_DATA_TYPE_*
  int64_t element_bytes = 0;
  std::array<uint64_t, 3> dims{};     // inner, rows, batch
  std::array<uint64_t, 2> strides{};  // bytes from one row, one batch entry, to the next
  std::array<uint32_t, 3> box{};      // box_inner, box_rows, 1
  int swizzle = 0;                    // CU_TENSOR_MAP_SWIZZLE_*
};

// One map of a kernel's argument, checked against the tensor it describes.
struct PlannedTensorMap {
  std::string tensor;        // the ABI tensor field it describes
  int64_t field_offset = 0;  // that field's offset in the struct: its address in the argument
  int64_t offset = 0;        // the map's offset in the argument
  TensorMapEncoding encoding;
};

// The maps of a kernel's argument for the tensors `abi` describes (each as
// it is stored: dtype, shape, layout), every precondition of
// cuTensorMapEncodeTiled but the address checked (TensorMapLayoutError, a
// tensor the struct does not have, a dtype other than bf16/f16/f32, a row
// stride not a multiple of 16 bytes or past 2^40, a dimension past 2^32, an
// inner box side not a multiple of 16 bytes or wider than its swizzle); or
// why not, naming the entry, its tensor and the rule.
std::variant<std::vector<PlannedTensorMap>, std::string> PlanTensorMaps(
    const TensorMapArguments& maps, int64_t argument_bytes, const v1::KernelAbi& abi);

struct TensorMapRefusal {
  std::string tensor;
  std::string message;
};

// The first planned map whose tensor's address, as `argument` (the op's
// struct packed at 0) holds it, a map cannot take: null, or not aligned to
// 16 bytes.
std::optional<TensorMapRefusal> TensorMapAddressRefusal(const std::vector<PlannedTensorMap>& plan,
                                                        const void* argument);

// Encodes each planned map into `argument` (argument_bytes long, the op's
// struct packed at 0), for the address the struct holds for its tensor.
// The first refusal, naming the tensor: TensorMapAddressRefusal's, or the
// driver's error.
std::optional<TensorMapRefusal> EncodeTensorMaps(const CudaDriver& driver,
                                                 const std::vector<PlannedTensorMap>& plan,
                                                 void* argument);

// The worker's: args' maps planned for its key's ABI and encoded into
// `packed` (PackKernelArgs sized it to argument_bytes). Nothing for a
// kernel without maps; the reason, naming the tensor, on failure.
std::optional<std::string> EncodeTensorMaps(const CudaDriver& driver, const KernelArguments& args,
                                            PackedKernelArgs& packed);

}  // namespace tiletune::runtime::cuda
