#include "kernels/core/op_registry.h"

#include <gtest/gtest.h>

#include <cstddef>
#include <map>
#include <set>

#include "kernels/core/kernel_key.h"
#include "kernels/tt/kernel_args.h"

namespace tiletune::kernels {
namespace {

v1::KernelKey Key(const std::string& op, v1::DType in,
                  std::initializer_list<std::pair<const char*, int64_t>> dims) {
  v1::KernelKey key;
  key.set_op(op);
  key.set_input_dtype(in);
  for (const auto& [name, size] : dims) {
    auto* d = key.add_shape();
    d->set_name(name);
    d->set_size(size);
  }
  return key;
}

TEST(OpRegistry, ListsEveryOpOnceInMessageOrder) {
  EXPECT_EQ(OpNames(), "gemm, softmax, rmsnorm, layernorm, elementwise");
  EXPECT_EQ(OpNames(FusionKind::kRowReduction), "softmax, rmsnorm, layernorm");
  EXPECT_EQ(KernelOpFor(FusionKind::kMatmul).name, "gemm");
  EXPECT_EQ(KernelOpFor(FusionKind::kElementwise).name, "elementwise");
  for (const OpSpec* spec : AllOpSpecs()) {
    EXPECT_EQ(FindOpSpec(spec->name), spec);
    EXPECT_TRUE(IsKnownOp(spec->name));
  }
  EXPECT_EQ(FindOpSpec("conv"), nullptr);
  EXPECT_THROW(OpSpecOf("conv"), std::invalid_argument);
}

// The ABI an op documents names real fields of tt_kernel_args (offsetof
// fails to compile for a field that is not there), every tensor spans the
// op's own dims and exactly one tensor is the output.
TEST(OpRegistry, ArgumentAbiNamesKernelArgsFields) {
  const std::map<std::string_view, size_t> fields = {
      {"a", offsetof(tt_kernel_args, a)},         {"b", offsetof(tt_kernel_args, b)},
      {"out", offsetof(tt_kernel_args, out)},     {"weight", offsetof(tt_kernel_args, weight)},
      {"shift", offsetof(tt_kernel_args, shift)}, {"m", offsetof(tt_kernel_args, m)},
      {"n", offsetof(tt_kernel_args, n)},         {"k", offsetof(tt_kernel_args, k)},
      {"batch", offsetof(tt_kernel_args, batch)},
  };
  for (const OpSpec* spec : AllOpSpecs()) {
    SCOPED_TRACE(std::string(spec->name));
    EXPECT_GE(spec->abi_version, 1);
    std::set<std::string_view> dims, used_fields;
    for (const DimArg& d : spec->dims) {
      dims.insert(d.name);
      EXPECT_TRUE(fields.contains(d.abi_field)) << d.abi_field;
      EXPECT_TRUE(used_fields.insert(d.abi_field).second) << d.abi_field;
    }
    int outputs = 0;
    for (const TensorArg& t : spec->tensors) {
      outputs += t.role == TensorRole::kOutput;
      EXPECT_TRUE(fields.contains(t.abi_field)) << t.abi_field;
      EXPECT_TRUE(used_fields.insert(t.abi_field).second) << t.abi_field;
      for (std::string_view d : t.dims) EXPECT_TRUE(dims.contains(d)) << t.name << ": " << d;
    }
    EXPECT_EQ(outputs, 1);
  }
  const OpSpec& rmsnorm = OpSpecOf("rmsnorm");
  EXPECT_EQ(FindTensor(rmsnorm, "x")->abi_field, "a");
  EXPECT_EQ(FindTensor(rmsnorm, "w")->abi_field, "weight");
  EXPECT_EQ(FindTensor(rmsnorm, "y")->abi_field, "out");
}

TEST(OpRegistry, ProblemFlopsCountTheOpAndAnElementwiseKernelsChain) {
  auto gemm = Key("gemm", v1::DTYPE_F16, {{"m", 64}, {"n", 32}, {"k", 16}, {"batch", 3}});
  gemm.add_chain()->set_op("relu");
  EXPECT_EQ(ProblemFlops(gemm), 2 * 64 * 32 * 16 * 3);
  EXPECT_EQ(ProblemFlops(Key("softmax", v1::DTYPE_F32, {{"rows", 8}, {"cols", 100}})), 5 * 8 * 100);
  auto elementwise = Key("elementwise", v1::DTYPE_F32, {{"rows", 8}, {"cols", 100}});
  elementwise.add_chain()->set_op("relu");
  elementwise.add_chain()->set_op("silu");
  EXPECT_EQ(ProblemFlops(elementwise), 2 * 8 * 100);
}

TEST(OpRegistry, ProblemBytesReadEachInputAndWriteEachOutputOnce) {
  // f16 A [3, 64, 16] and B [3, 16, 32] in, f32 C [3, 64, 32] out, an f32
  // bias per column.
  auto gemm = Key("gemm", v1::DTYPE_F16, {{"m", 64}, {"n", 32}, {"k", 16}, {"batch", 3}});
  gemm.set_output_dtype(v1::DTYPE_F32);
  gemm.add_chain()->set_op("bias");
  EXPECT_EQ(ProblemBytes(gemm), 3 * (64 * 16 + 16 * 32) * 2 + 3 * 64 * 32 * 4 + 32 * 4);
  // bf16 x [8, 100] and w [100] in, y out; a residual_add prologue whose
  // result is written as well.
  auto rmsnorm = Key("rmsnorm", v1::DTYPE_BF16, {{"rows", 8}, {"cols", 100}});
  rmsnorm.add_prologue()->set_op("residual_add");
  rmsnorm.set_write_prologue_output(true);
  EXPECT_EQ(ProblemBytes(rmsnorm), (800 + 100 + 800 + 800 + 800) * 2);
  EXPECT_EQ(ProblemBytes(Key("layernorm", v1::DTYPE_F32, {{"rows", 2}, {"cols", 10}})),
            (20 + 10 + 10 + 20) * 4);
}

}  // namespace
}  // namespace tiletune::kernels
