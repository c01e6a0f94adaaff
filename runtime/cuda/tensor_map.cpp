#include "runtime/cuda/tensor_map.h"

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <stdexcept>

#include "kernels/core/abi_description.h"
#include "kernels/tt/kernel_args.h"

namespace tiletune::runtime::cuda {

// The kernels' tt_tensor_map is the driver's CUtensorMap.
static_assert(sizeof(tt_tensor_map) == sizeof(CUtensorMap) && sizeof(CUtensorMap) == 128);
static_assert(alignof(tt_tensor_map) == alignof(CUtensorMap) && alignof(CUtensorMap) == 64);

namespace {

// cuTensorMapEncodeTiled's limits.
constexpr int64_t kMaxBoxSide = 256;
constexpr uint64_t kMaxDim = uint64_t{1} << 32;
constexpr uint64_t kStrideLimit = uint64_t{1} << 40;  // strides stay below it
constexpr int64_t kStrideMultiple = 16;
constexpr uintptr_t kAddressAlignment = 16;

std::string Entry(int i, const v1::TensorMapArgument& map) {
  return "tensor_maps[" + std::to_string(i) + "] (" +
         (map.tensor().empty() ? std::string("no tensor") : map.tensor()) + ")";
}

int SwizzleOf(int32_t bytes) {
  switch (bytes) {
    case 0: return CU_TENSOR_MAP_SWIZZLE_NONE;
    case 32: return CU_TENSOR_MAP_SWIZZLE_32B;
    case 64: return CU_TENSOR_MAP_SWIZZLE_64B;
    case 128: return CU_TENSOR_MAP_SWIZZLE_128B;
    default: return -1;
  }
}

// The element types a map may copy: the ABI's tensor dtypes but f64.
std::optional<std::pair<int, int64_t>> ElementOf(v1::DType dtype) {
  switch (dtype) {
    case v1::DTYPE_F32: return std::pair{CU_TENSOR_MAP_DATA_TYPE_FLOAT32, int64_t{4}};
    case v1::DTYPE_F16: return std::pair{CU_TENSOR_MAP_DATA_TYPE_FLOAT16, int64_t{2}};
    case v1::DTYPE_BF16: return std::pair{CU_TENSOR_MAP_DATA_TYPE_BFLOAT16, int64_t{2}};
    default: return std::nullopt;
  }
}

// The tensor as stored, [batch][rows][inner]: inner is its contiguous
// extent (the last dim, or the one before it where the layout is
// column-major), rows the other of its last two dims, batch the product of
// the rest. Served tensors are dense: a row is `inner` elements long (the
// ABI fixes every leading dimension to the key's dense one).
struct StoredTensor {
  int64_t inner = 1, rows = 1, batch = 1;
};

StoredTensor StoredOf(const v1::AbiField& field) {
  const auto& shape = field.shape();
  const int n = shape.size();
  StoredTensor stored;
  const int64_t last = shape[n - 1];
  const int64_t second = n >= 2 ? shape[n - 2] : 1;
  const bool col_major = n >= 2 && field.layout() == v1::LAYOUT_COL_MAJOR;
  stored.inner = col_major ? second : last;
  stored.rows = col_major ? last : second;
  for (int i = 0; i + 2 < n; ++i) stored.batch *= shape[i];
  return stored;
}

std::variant<TensorMapEncoding, std::string> EncodingOf(const v1::TensorMapArgument& map,
                                                        const v1::AbiField& field) {
  const auto element = ElementOf(field.dtype());
  if (!element) {
    return "its tensor's dtype " + v1::DType_Name(field.dtype()) +
           " has no tensor map element type here (bf16, f16, f32)";
  }
  if (field.shape().empty()) return std::string("its tensor has no shape");
  for (const int64_t size : field.shape()) {
    if (size < 1 || static_cast<uint64_t>(size) > kMaxDim) {
      return "its tensor's dimension of " + std::to_string(size) + " is outside 1..2^32";
    }
  }
  StoredTensor stored = StoredOf(field);
  if (!map.view().empty()) {
    int64_t elements = 1, viewed = 1;
    for (const int64_t size : field.shape()) elements *= size;
    for (const int64_t size : map.view()) viewed *= size > 0 ? size : 0;
    if (map.view_size() != 3 || viewed != elements) {
      return "view of " + std::to_string(map.view_size()) + " sizes holding " +
             std::to_string(viewed) + " elements is not [batch][rows][inner] of its tensor's " +
             std::to_string(elements);
    }
    stored = {map.view(2), map.view(1), map.view(0)};
  }
  TensorMapEncoding e;
  e.data_type = element->first;
  e.element_bytes = element->second;
  if (static_cast<uint64_t>(stored.batch) > kMaxDim) {
    return "its tensor's batch of " + std::to_string(stored.batch) + " entries is past 2^32";
  }
  e.dims = {static_cast<uint64_t>(stored.inner), static_cast<uint64_t>(stored.rows),
            static_cast<uint64_t>(stored.batch)};
  const uint64_t row_stride = static_cast<uint64_t>(stored.inner * e.element_bytes);
  if (row_stride % kStrideMultiple != 0) {
    return "row stride of " + std::to_string(row_stride) + " bytes (" +
           std::to_string(stored.inner) + " elements of " + std::to_string(e.element_bytes) +
           ") is not a multiple of 16 bytes";
  }
  const uint64_t batch_stride = row_stride * static_cast<uint64_t>(stored.rows);
  if (batch_stride >= kStrideLimit) {
    return "batch stride of " + std::to_string(batch_stride) + " bytes is not below 2^40";
  }
  e.strides = {row_stride, batch_stride};
  e.box = {static_cast<uint32_t>(map.box_inner()), static_cast<uint32_t>(map.box_rows()), 1};
  const int64_t inner_box_bytes = map.box_inner() * e.element_bytes;
  if (inner_box_bytes % kStrideMultiple != 0) {
    return "box_inner of " + std::to_string(map.box_inner()) + " elements is " +
           std::to_string(inner_box_bytes) + " bytes, not a multiple of 16 bytes";
  }
  if (map.swizzle_bytes() > 0 && inner_box_bytes > map.swizzle_bytes()) {
    return "box_inner of " + std::to_string(map.box_inner()) + " elements is " +
           std::to_string(inner_box_bytes) + " bytes, wider than its " +
           std::to_string(map.swizzle_bytes()) + "-byte swizzle";
  }
  e.swizzle = SwizzleOf(map.swizzle_bytes());
  return e;
}

// The address the packed struct holds for the map's tensor.
const void* AddressIn(const void* argument, const PlannedTensorMap& planned) {
  const void* address = nullptr;
  std::memcpy(&address, static_cast<const std::byte*>(argument) + planned.field_offset,
              sizeof(address));
  return address;
}

std::string Hex(const void* address) {
  char text[32];
  std::snprintf(text, sizeof(text), "%p", address);
  return text;
}

}  // namespace

std::optional<std::string> TensorMapLayoutError(const TensorMapArguments& maps,
                                                int64_t argument_bytes, int64_t struct_bytes) {
  const std::string argument = "argument_bytes " + std::to_string(argument_bytes);
  if (maps.empty()) {
    if (argument_bytes == 0) return std::nullopt;
    return argument + " without tensor maps (0 unless the kernel takes some)";
  }
  if (argument_bytes <= struct_bytes) {
    return argument + " leaves no room for tensor maps after the " + std::to_string(struct_bytes) +
           "-byte struct";
  }
  if (argument_bytes > kMaxArgumentBytes) {
    return argument + " is past cuLaunchKernel's limit of " + std::to_string(kMaxArgumentBytes) +
           " bytes of kernel parameters";
  }
  if (argument_bytes % kTensorMapAlignment != 0) {
    return argument + " is not a multiple of 64, as a struct holding tensor maps is";
  }
  for (int i = 0; i < maps.size(); ++i) {
    const v1::TensorMapArgument& map = maps[i];
    const std::string entry = Entry(i, map);
    if (map.tensor().empty()) return entry + ": names no tensor";
    const int64_t offset = map.offset();
    if (offset % kTensorMapAlignment != 0) {
      return entry + ": offset " + std::to_string(offset) + " is not a multiple of 64";
    }
    if (offset < struct_bytes) {
      return entry + ": offset " + std::to_string(offset) + " overlaps the " +
             std::to_string(struct_bytes) + "-byte struct";
    }
    if (offset + kTensorMapBytes > argument_bytes) {
      return entry + ": offset " + std::to_string(offset) + " puts its 128 bytes past " + argument;
    }
    for (int j = 0; j < i; ++j) {
      if (std::abs(maps[j].offset() - offset) < kTensorMapBytes) {
        return entry + ": offset " + std::to_string(offset) + " overlaps " + Entry(j, maps[j]);
      }
    }
    for (const auto& [name, side] :
         {std::pair{"box_inner", map.box_inner()}, {"box_rows", map.box_rows()}}) {
      if (side < 1 || side > kMaxBoxSide) {
        return entry + ": " + name + " " + std::to_string(side) + " is outside 1..256";
      }
    }
    if (SwizzleOf(map.swizzle_bytes()) < 0) {
      return entry + ": swizzle_bytes " + std::to_string(map.swizzle_bytes()) +
             " is none of 0, 32, 64, 128";
    }
  }
  return std::nullopt;
}

std::variant<std::vector<PlannedTensorMap>, std::string> PlanTensorMaps(
    const TensorMapArguments& maps, int64_t argument_bytes, const v1::KernelAbi& abi) {
  if (auto error = TensorMapLayoutError(maps, argument_bytes, abi.struct_bytes())) return *error;
  std::vector<PlannedTensorMap> plan;
  for (int i = 0; i < maps.size(); ++i) {
    const v1::TensorMapArgument& map = maps[i];
    const v1::AbiField* field = nullptr;
    for (const v1::AbiField& f : abi.fields()) {
      if (f.name() == map.tensor() && f.kind() == v1::AbiField::KIND_TENSOR) field = &f;
    }
    if (!field) {
      return Entry(i, map) + ": " + abi.struct_name() + " has no tensor of that name";
    }
    auto encoding = EncodingOf(map, *field);
    if (const auto* why = std::get_if<std::string>(&encoding)) return Entry(i, map) + ": " + *why;
    plan.push_back(
        {map.tensor(), field->offset(), map.offset(), std::get<TensorMapEncoding>(encoding)});
  }
  return plan;
}

std::optional<TensorMapRefusal> TensorMapAddressRefusal(const std::vector<PlannedTensorMap>& plan,
                                                        const void* argument) {
  for (const PlannedTensorMap& planned : plan) {
    const void* address = AddressIn(argument, planned);
    if (!address) {
      return TensorMapRefusal{planned.tensor,
                              "the kernel reads this tensor through a tensor map; none given"};
    }
    if (reinterpret_cast<uintptr_t>(address) % kAddressAlignment != 0) {
      return TensorMapRefusal{planned.tensor, "address " + Hex(address) +
                                                  " is not aligned to 16 bytes, as a tensor "
                                                  "map's must be"};
    }
  }
  return std::nullopt;
}

std::optional<TensorMapRefusal> EncodeTensorMaps(const CudaDriver& driver,
                                                 const std::vector<PlannedTensorMap>& plan,
                                                 void* argument) {
  if (auto refusal = TensorMapAddressRefusal(plan, argument)) return refusal;
  for (const PlannedTensorMap& planned : plan) {
    const TensorMapEncoding& e = planned.encoding;
    const std::array<uint32_t, 3> element_strides{1, 1, 1};
    // The driver writes maps at 64-byte aligned addresses; the argument
    // buffer is only 8-byte aligned.
    CUtensorMap map{};
    const CUresult result = driver.api().cuTensorMapEncodeTiled(
        &map, e.data_type, 3, const_cast<void*>(AddressIn(argument, planned)), e.dims.data(),
        e.strides.data(), e.box.data(), element_strides.data(), CU_TENSOR_MAP_INTERLEAVE_NONE,
        e.swizzle, CU_TENSOR_MAP_L2_PROMOTION_L2_256B, CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE);
    if (result != CUDA_SUCCESS) {
      return TensorMapRefusal{planned.tensor, driver.Describe(result, "cuTensorMapEncodeTiled")};
    }
    std::memcpy(static_cast<std::byte*>(argument) + planned.offset, &map, sizeof(map));
  }
  return std::nullopt;
}

std::optional<std::string> EncodeTensorMaps(const CudaDriver& driver, const KernelArguments& args,
                                            PackedKernelArgs& packed) {
  if (args.tensor_maps.empty()) return std::nullopt;
  v1::KernelAbi abi;
  try {
    abi = kernels::DescribeLaunchAbi(args.key, v1::KernelAbi::PASSING_BY_VALUE);
  } catch (const std::invalid_argument& e) {
    return std::string("tensor maps describe the tensors of the arguments' key: ") + e.what();
  }
  auto plan = PlanTensorMaps(args.tensor_maps, args.argument_bytes, abi);
  if (const auto* why = std::get_if<std::string>(&plan)) return *why;
  if (packed.size() != static_cast<size_t>(args.argument_bytes)) {
    return "the packed argument has " + std::to_string(packed.size()) +
           " bytes, not argument_bytes " + std::to_string(args.argument_bytes);
  }
  if (auto refusal =
          EncodeTensorMaps(driver, std::get<std::vector<PlannedTensorMap>>(plan), packed.data())) {
    return refusal->tensor + ": " + refusal->message;
  }
  return std::nullopt;
}

}  // namespace tiletune::runtime::cuda
