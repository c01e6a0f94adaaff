#include "runtime/packed_kernel_args.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstddef>
#include <cstring>

#include "kernels/core/op_registry.h"
#include "kernels/ops/gemm/gemm_args.h"
#include "kernels/ops/layernorm/layernorm_args.h"
#include "runtime/host/host_executor.h"
#include "tests/support/gemm_call.h"

namespace tiletune::runtime {
namespace {

// Distinct fake addresses: packing never dereferences them.
DeviceBuffer At(uintptr_t address) {
  return {reinterpret_cast<void*>(address), 4};
}

TEST(PackedKernelArgs, LaysGemmArgumentsOutAsTtGemmArgs) {
  KernelArguments args = testing::GemmCall(At(0x1000), At(0x2000), At(0x3000));
  args.ints = {{"m", 1}, {"n", 2}, {"k", 3}, {"batch", 4}, {"lda", 5}, {"ldb", 6}, {"ldc", 7}};
  args.chain_tensors = {{}, At(0x4000)};
  args.chain_scalars = {0.5, 0};
  PackedKernelArgs packed;
  ASSERT_EQ(PackKernelArgs(args, &packed), std::nullopt);
  ASSERT_EQ(packed.size(), sizeof(tt_gemm_args));
  tt_gemm_args raw;
  std::memcpy(&raw, packed.data(), sizeof(raw));
  EXPECT_EQ(raw.a, At(0x1000).ptr);
  EXPECT_EQ(raw.b, At(0x2000).ptr);
  EXPECT_EQ(raw.c, At(0x3000).ptr);
  EXPECT_EQ(raw.chain.tensors[0], nullptr);
  EXPECT_EQ(raw.chain.tensors[1], At(0x4000).ptr);
  EXPECT_EQ(raw.chain.scalars[0], 0.5f);
  EXPECT_EQ(raw.chain.tensors[TT_MAX_CHAIN - 1], nullptr);
  EXPECT_EQ((std::vector<long long>{raw.m, raw.n, raw.k, raw.batch, raw.lda, raw.ldb, raw.ldc}),
            (std::vector<long long>{1, 2, 3, 4, 5, 6, 7}));
}

TEST(PackedKernelArgs, LaysLayernormArgumentsOutByName) {
  KernelArguments args;
  args.op = &kernels::OpSpecOf("layernorm");
  args.tensors = {{"x", At(0x10)}, {"w", At(0x20)}, {"b", At(0x30)}, {"y", At(0x40)}};
  args.ints = {{"rows", 3}, {"cols", 5}, {"ldx", 6}, {"ldy", 7}};
  args.floats = {{"eps", 0.25}};
  PackedKernelArgs packed;
  ASSERT_EQ(PackKernelArgs(args, &packed), std::nullopt);
  tt_layernorm_args raw;
  ASSERT_EQ(packed.size(), sizeof(raw));
  std::memcpy(&raw, packed.data(), sizeof(raw));
  EXPECT_EQ(raw.x, At(0x10).ptr);
  EXPECT_EQ(raw.w, At(0x20).ptr);
  EXPECT_EQ(raw.b, At(0x30).ptr);
  EXPECT_EQ(raw.y, At(0x40).ptr);
  EXPECT_EQ(raw.prologue_out, nullptr) << "left out: the key writes no prologue output";
  EXPECT_EQ((std::vector<long long>{raw.rows, raw.cols, raw.ldx, raw.ldy}),
            (std::vector<long long>{3, 5, 6, 7}));
  EXPECT_EQ(raw.eps, 0.25f);
}

TEST(PackedKernelArgs, RefusesWhatTheStructCannotCarry) {
  PackedKernelArgs packed;
  EXPECT_EQ(PackKernelArgs(KernelArguments{}, &packed), "the kernel arguments name no op");

  KernelArguments args = testing::GemmCall(At(1), At(2), At(3));
  args.tensors.erase("b");
  EXPECT_EQ(PackKernelArgs(args, &packed), "no tensor for tt_gemm_args.b");

  args = testing::GemmCall(At(1), At(2), At(3));
  args.ints.erase("ldc");
  EXPECT_EQ(PackKernelArgs(args, &packed), "no value for tt_gemm_args.ldc");

  args = testing::GemmCall(At(1), At(2), At(3));
  args.ints["rows"] = 4;  // a row op's name: gemm has m
  EXPECT_EQ(PackKernelArgs(args, &packed), "tt_gemm_args.rows is no field of the struct");

  args = testing::GemmCall(At(1), At(2), At(3));
  args.chain_scalars.assign(TT_MAX_CHAIN + 1, 1.0);
  const auto too_long = PackKernelArgs(args, &packed);
  ASSERT_TRUE(too_long);
  EXPECT_NE(too_long->find("exceeds TT_MAX_CHAIN"), std::string::npos) << *too_long;
}

// tt_gemm_tma_args: the gemm struct, then room for the maps of a and b.
void AddTmaMaps(KernelArguments& args) {
  for (const auto& [tensor, offset] : {std::pair{"a", offsetof(tt_gemm_tma_args, a_map)},
                                       {"b", offsetof(tt_gemm_tma_args, b_map)}}) {
    v1::TensorMapArgument& map = *args.tensor_maps.Add();
    map.set_tensor(tensor);
    map.set_offset(static_cast<int64_t>(offset));
    map.set_box_inner(64);
    map.set_box_rows(64);
    map.set_swizzle_bytes(128);
  }
  args.argument_bytes = sizeof(tt_gemm_tma_args);
}

TEST(PackedKernelArgs, ATmaKernelsArgumentIsTheStructThenZerosForItsMaps) {
  KernelArguments args = testing::GemmCall(At(0x1000), At(0x2000), At(0x3000));
  args.ints["ldc"] = 7;
  AddTmaMaps(args);
  PackedKernelArgs packed;
  ASSERT_EQ(PackKernelArgs(args, &packed), std::nullopt);
  ASSERT_EQ(packed.size(), sizeof(tt_gemm_tma_args));
  tt_gemm_tma_args raw;
  std::memcpy(&raw, packed.data(), sizeof(raw));
  EXPECT_EQ(raw.gemm.a, At(0x1000).ptr);
  EXPECT_EQ(raw.gemm.ldc, 7);
  const auto* bytes = static_cast<const unsigned char*>(packed.data());
  EXPECT_TRUE(std::all_of(bytes + sizeof(tt_gemm_args), bytes + packed.size(), [](unsigned char b) {
    return b == 0;
  })) << "the maps are the executor's to encode";

  args.tensor_maps.Mutable(1)->set_offset(offsetof(tt_gemm_tma_args, a_map) + 64);
  EXPECT_EQ(PackKernelArgs(args, &packed),
            "tensor_maps[1] (b): offset 384 overlaps tensor_maps[0] (a)");
}

TEST(TensorMapsRefusal, TheHostExecutorRefusesAKernelWithTensorMaps) {
  KernelArguments args = testing::GemmCall(At(0x1000), At(0x2000), At(0x3000));
  EXPECT_EQ(TensorMapsRefusal("host", args), std::nullopt);
  AddTmaMaps(args);
  EXPECT_EQ(host::HostExecutor().Launch(args),
            "the host executor encodes no tensor maps (TMA is CUDA's, sm_90+), and the kernel's "
            "argument carries maps of a, b");
}

}  // namespace
}  // namespace tiletune::runtime
