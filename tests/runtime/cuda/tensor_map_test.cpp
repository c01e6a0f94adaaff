// TMA kernels' tensor maps planned for their argument (no GPU needed): where
// the maps of tt_gemm_tma_args go, what each encodes for the tensor it
// names as that tensor is stored, and every refusal, naming the entry, its
// tensor and the rule.
#include "runtime/cuda/tensor_map.h"

#include <gtest/gtest.h>

#include <cstddef>
#include <vector>

#include "kernels/core/abi_description.h"
#include "kernels/ops/gemm/gemm_args.h"
#include "tests/support/gemm_test_key.h"

namespace tiletune::runtime::cuda {
namespace {

using tiletune::testing::GatedBySwiglu;
using tiletune::testing::GemmTestKey;

constexpr auto B = v1::DTYPE_BF16, H = v1::DTYPE_F16, F = v1::DTYPE_F32;
constexpr int64_t kArgumentBytes = sizeof(tt_gemm_tma_args);
constexpr int64_t kAMap = offsetof(tt_gemm_tma_args, a_map);
constexpr int64_t kBMap = offsetof(tt_gemm_tma_args, b_map);
constexpr int64_t kCMap = offsetof(tt_gemm_tma_args, c_map);

v1::KernelAbi GemmAbi(int64_t m, int64_t n, int64_t k, int64_t batch, v1::DType dtype,
                      bool b_col_major = false) {
  return kernels::DescribeLaunchAbi(GemmTestKey(m, n, k, batch, dtype, dtype, false, b_col_major),
                                    v1::KernelAbi::PASSING_BY_VALUE);
}

v1::TensorMapArgument Map(const char* tensor, int64_t offset, int64_t box_inner = 64,
                          int64_t box_rows = 128, int32_t swizzle_bytes = 128) {
  v1::TensorMapArgument map;
  map.set_tensor(tensor);
  map.set_offset(offset);
  map.set_box_inner(box_inner);
  map.set_box_rows(box_rows);
  map.set_swizzle_bytes(swizzle_bytes);
  return map;
}

TensorMapArguments Maps(const std::vector<v1::TensorMapArgument>& maps) {
  TensorMapArguments out;
  for (const auto& map : maps) *out.Add() = map;
  return out;
}

// The plan's error text, or "planned".
std::string Refusal(const std::vector<v1::TensorMapArgument>& maps, const v1::KernelAbi& abi,
                    int64_t argument_bytes = kArgumentBytes) {
  const auto plan = PlanTensorMaps(Maps(maps), argument_bytes, abi);
  const auto* why = std::get_if<std::string>(&plan);
  return why ? *why : "planned";
}

TEST(TensorMapPlan, TheMapsOfTtGemmTmaArgsEncodeATheBAndCAsStored) {
  // a [3][100][72] row-major, b [3][72][136] column-major (stored [136][72]),
  // c [3][100][136].
  const auto plan =
      PlanTensorMaps(Maps({Map("a", kAMap), Map("b", kBMap, 64, 256), Map("c", kCMap, 32, 64, 64)}),
                     kArgumentBytes, GemmAbi(100, 136, 72, 3, B, /*b_col_major=*/true));
  ASSERT_TRUE(std::holds_alternative<std::vector<PlannedTensorMap>>(plan))
      << std::get<std::string>(plan);
  const auto& maps = std::get<std::vector<PlannedTensorMap>>(plan);
  ASSERT_EQ(maps.size(), 3u);

  EXPECT_EQ(maps[0].tensor, "a");
  EXPECT_EQ(maps[0].field_offset, static_cast<int64_t>(offsetof(tt_gemm_args, a)));
  EXPECT_EQ(maps[0].offset, kAMap);
  const TensorMapEncoding& a = maps[0].encoding;
  EXPECT_EQ(a.data_type, CU_TENSOR_MAP_DATA_TYPE_BFLOAT16);
  EXPECT_EQ(a.element_bytes, 2);
  EXPECT_EQ(a.dims, (std::array<uint64_t, 3>{72, 100, 3}));
  EXPECT_EQ(a.strides, (std::array<uint64_t, 2>{144, 144 * 100}));
  EXPECT_EQ(a.box, (std::array<uint32_t, 3>{64, 128, 1}));
  EXPECT_EQ(a.swizzle, CU_TENSOR_MAP_SWIZZLE_128B);

  EXPECT_EQ(maps[1].field_offset, static_cast<int64_t>(offsetof(tt_gemm_args, b)));
  EXPECT_EQ(maps[1].offset, kBMap);
  EXPECT_EQ(maps[1].encoding.dims, (std::array<uint64_t, 3>{72, 136, 3}))
      << "column-major: k is b's contiguous extent";
  EXPECT_EQ(maps[1].encoding.strides, (std::array<uint64_t, 2>{144, 144 * 136}));
  EXPECT_EQ(maps[1].encoding.box, (std::array<uint32_t, 3>{64, 256, 1}));

  EXPECT_EQ(maps[2].field_offset, static_cast<int64_t>(offsetof(tt_gemm_args, c)));
  EXPECT_EQ(maps[2].encoding.dims, (std::array<uint64_t, 3>{136, 100, 3}));
  EXPECT_EQ(maps[2].encoding.strides, (std::array<uint64_t, 2>{272, 272 * 100}));
  EXPECT_EQ(maps[2].encoding.swizzle, CU_TENSOR_MAP_SWIZZLE_64B);
}

// A gated key's b_up is read like b: its map has b's extents, at b_up's
// field; an ungated key's b_up has no shape to map.
TEST(TensorMapPlan, AGatedKeysUpProjectionIsMappedLikeB) {
  const v1::KernelKey key = GatedBySwiglu(GemmTestKey(100, 136, 72, 3, B, B, false, true));
  const v1::KernelAbi gated = kernels::DescribeLaunchAbi(key, v1::KernelAbi::PASSING_BY_VALUE);
  const int64_t up_map = offsetof(tt_gemm_tma_args, b_up_map);
  const auto plan = PlanTensorMaps(Maps({Map("b", kBMap, 64, 128), Map("b_up", up_map, 64, 128)}),
                                   kArgumentBytes, gated);
  ASSERT_TRUE(std::holds_alternative<std::vector<PlannedTensorMap>>(plan))
      << std::get<std::string>(plan);
  const auto& maps = std::get<std::vector<PlannedTensorMap>>(plan);
  ASSERT_EQ(maps.size(), 2u);
  EXPECT_EQ(maps[1].field_offset, static_cast<int64_t>(offsetof(tt_gemm_args, b_up)));
  EXPECT_EQ(maps[1].encoding.dims, maps[0].encoding.dims);
  EXPECT_EQ(maps[1].encoding.strides, maps[0].encoding.strides);
  EXPECT_NE(Refusal({Map("b_up", up_map)}, GemmAbi(100, 136, 72, 3, B, true)), "planned");
}

TEST(TensorMapPlan, AViewReplacesTheShapesBatchRowsAndInner) {
  // a [3][100][72] viewed as [1][300][72]: the batch entries as one run of
  // rows; c [3][100][136] as [3][50][272]. Strides stay dense in the view.
  v1::TensorMapArgument a = Map("a", kAMap), c = Map("c", kCMap, 64, 64);
  for (const int64_t size : {1, 300, 72}) a.add_view(size);
  for (const int64_t size : {3, 50, 272}) c.add_view(size);
  const auto plan = PlanTensorMaps(Maps({a, c}), kArgumentBytes, GemmAbi(100, 136, 72, 3, B));
  ASSERT_TRUE(std::holds_alternative<std::vector<PlannedTensorMap>>(plan))
      << std::get<std::string>(plan);
  const auto& maps = std::get<std::vector<PlannedTensorMap>>(plan);
  EXPECT_EQ(maps[0].encoding.dims, (std::array<uint64_t, 3>{72, 300, 1}));
  EXPECT_EQ(maps[0].encoding.strides, (std::array<uint64_t, 2>{144, 144 * 300}));
  EXPECT_EQ(maps[1].encoding.dims, (std::array<uint64_t, 3>{272, 50, 3}));
  EXPECT_EQ(maps[1].encoding.strides, (std::array<uint64_t, 2>{544, 544 * 50}));

  v1::TensorMapArgument short_view = Map("a", kAMap), wrong_count = Map("a", kAMap);
  for (const int64_t size : {300, 72}) short_view.add_view(size);
  for (const int64_t size : {1, 301, 72}) wrong_count.add_view(size);
  EXPECT_EQ(Refusal({short_view}, GemmAbi(100, 136, 72, 3, B)),
            "tensor_maps[0] (a): view of 2 sizes holding 21600 elements is not "
            "[batch][rows][inner] of its tensor's 21600");
  EXPECT_EQ(Refusal({wrong_count}, GemmAbi(100, 136, 72, 3, B)),
            "tensor_maps[0] (a): view of 3 sizes holding 21672 elements is not "
            "[batch][rows][inner] of its tensor's 21600");
}

TEST(TensorMapPlan, EachDtypeHasItsElementTypeAndAVariantListsOnlyTheMapsItReads) {
  for (const auto& [dtype, type, bytes] : {std::tuple{F, CU_TENSOR_MAP_DATA_TYPE_FLOAT32, 4},
                                           {H, CU_TENSOR_MAP_DATA_TYPE_FLOAT16, 2},
                                           {B, CU_TENSOR_MAP_DATA_TYPE_BFLOAT16, 2}}) {
    const auto plan = PlanTensorMaps(Maps({Map("b", kBMap, 32, 8, 0)}), kArgumentBytes,
                                     GemmAbi(16, 64, 32, 1, dtype));
    ASSERT_TRUE(std::holds_alternative<std::vector<PlannedTensorMap>>(plan))
        << std::get<std::string>(plan);
    const auto& map = std::get<std::vector<PlannedTensorMap>>(plan).at(0);
    EXPECT_EQ(map.encoding.data_type, type);
    EXPECT_EQ(map.encoding.element_bytes, bytes);
    EXPECT_EQ(map.encoding.strides[0], static_cast<uint64_t>(64 * bytes));
    EXPECT_EQ(map.encoding.swizzle, CU_TENSOR_MAP_SWIZZLE_NONE);
  }
  // No maps, no argument_bytes: the plain struct.
  const auto none = PlanTensorMaps(Maps({}), 0, GemmAbi(16, 64, 32, 1, B));
  ASSERT_TRUE(std::holds_alternative<std::vector<PlannedTensorMap>>(none));
  EXPECT_TRUE(std::get<std::vector<PlannedTensorMap>>(none).empty());
}

TEST(TensorMapLayout, MapsThatDoNotFitTheArgumentAreRefusedNamingTheRule) {
  const v1::KernelAbi abi = GemmAbi(64, 64, 64, 1, B);
  const std::string struct_bytes = std::to_string(sizeof(tt_gemm_args));
  EXPECT_EQ(Refusal({}, abi), "argument_bytes " + std::to_string(kArgumentBytes) +
                                  " without tensor maps (0 unless the kernel takes some)");
  EXPECT_EQ(
      Refusal({Map("a", kAMap)}, abi, 0),
      "argument_bytes 0 leaves no room for tensor maps after the " + struct_bytes + "-byte struct");
  EXPECT_EQ(Refusal({Map("a", kAMap)}, abi, 4160),
            "argument_bytes 4160 is past cuLaunchKernel's limit of 4096 bytes of kernel "
            "parameters");
  EXPECT_EQ(Refusal({Map("a", kAMap)}, abi, 720),
            "argument_bytes 720 is not a multiple of 64, as a struct holding tensor maps is");
  EXPECT_EQ(Refusal({Map("", kAMap)}, abi), "tensor_maps[0] (no tensor): names no tensor");
  EXPECT_EQ(Refusal({Map("a", kAMap + 8)}, abi),
            "tensor_maps[0] (a): offset " + std::to_string(kAMap + 8) + " is not a multiple of 64");
  EXPECT_EQ(Refusal({Map("a", 256)}, abi),
            "tensor_maps[0] (a): offset 256 overlaps the " + struct_bytes + "-byte struct");
  EXPECT_EQ(Refusal({Map("a", kArgumentBytes - 64)}, abi),
            "tensor_maps[0] (a): offset " + std::to_string(kArgumentBytes - 64) +
                " puts its 128 bytes past argument_bytes " + std::to_string(kArgumentBytes));
  EXPECT_EQ(
      Refusal({Map("a", kAMap), Map("b", kAMap + 64)}, abi),
      "tensor_maps[1] (b): offset " + std::to_string(kAMap + 64) + " overlaps tensor_maps[0] (a)");
  EXPECT_EQ(Refusal({Map("a", kAMap, 0)}, abi),
            "tensor_maps[0] (a): box_inner 0 is outside 1..256");
  EXPECT_EQ(Refusal({Map("a", kAMap, 64, 257)}, abi),
            "tensor_maps[0] (a): box_rows 257 is outside 1..256");
  EXPECT_EQ(Refusal({Map("a", kAMap, 64, 128, 16)}, abi),
            "tensor_maps[0] (a): swizzle_bytes 16 is none of 0, 32, 64, 128");
}

TEST(TensorMapPlan, AMapItsTensorCannotTakeIsRefusedNamingTheRule) {
  EXPECT_EQ(Refusal({Map("x", kAMap)}, GemmAbi(64, 64, 64, 1, B)),
            "tensor_maps[0] (x): tt_gemm_args has no tensor of that name");
  // k = 29 bf16: 58-byte rows.
  EXPECT_EQ(Refusal({Map("c", kCMap), Map("a", kAMap)}, GemmAbi(64, 64, 29, 1, B)),
            "tensor_maps[1] (a): row stride of 58 bytes (29 elements of 2) is not a multiple of "
            "16 bytes");
  EXPECT_EQ(Refusal({Map("a", kAMap, 12, 8, 0)}, GemmAbi(64, 64, 64, 1, B)),
            "tensor_maps[0] (a): box_inner of 12 elements is 24 bytes, not a multiple of 16 "
            "bytes");
  EXPECT_EQ(Refusal({Map("a", kAMap, 64, 8, 64)}, GemmAbi(64, 64, 64, 1, B)),
            "tensor_maps[0] (a): box_inner of 64 elements is 128 bytes, wider than its 64-byte "
            "swizzle");
  EXPECT_EQ(Refusal({Map("a", kAMap, 64, 8, 128)}, GemmAbi(64, 64, 64, 1, F)),
            "tensor_maps[0] (a): box_inner of 64 elements is 256 bytes, wider than its 128-byte "
            "swizzle");
  v1::KernelAbi f64 = GemmAbi(64, 64, 64, 1, B);
  f64.mutable_fields(0)->set_dtype(v1::DTYPE_F64);
  EXPECT_EQ(Refusal({Map("a", kAMap)}, f64),
            "tensor_maps[0] (a): its tensor's dtype DTYPE_F64 has no tensor map element type here "
            "(bf16, f16, f32)");
}

TEST(TensorMapAddress, ANullOrMisalignedTensorIsRefusedByName) {
  const auto plan = PlanTensorMaps(Maps({Map("a", kAMap), Map("c", kCMap, 64, 128, 128)}),
                                   kArgumentBytes, GemmAbi(64, 64, 64, 1, B));
  const auto& maps = std::get<std::vector<PlannedTensorMap>>(plan);
  tt_gemm_tma_args argument{};
  argument.gemm.a = reinterpret_cast<const void*>(0x10000);
  argument.gemm.c = reinterpret_cast<void*>(0x20000);
  EXPECT_FALSE(TensorMapAddressRefusal(maps, &argument));
  argument.gemm.c = nullptr;
  auto refusal = TensorMapAddressRefusal(maps, &argument);
  ASSERT_TRUE(refusal);
  EXPECT_EQ(refusal->tensor, "c");
  EXPECT_EQ(refusal->message, "the kernel reads this tensor through a tensor map; none given");
  argument.gemm.c = reinterpret_cast<void*>(0x20000);
  argument.gemm.a = reinterpret_cast<const void*>(0x10008);
  refusal = TensorMapAddressRefusal(maps, &argument);
  ASSERT_TRUE(refusal);
  EXPECT_EQ(refusal->tensor, "a");
  EXPECT_EQ(refusal->message,
            "address 0x10008 is not aligned to 16 bytes, as a tensor map's must be");
}

}  // namespace
}  // namespace tiletune::runtime::cuda
