#include "kernels/core/op_registry.h"

#include <gtest/gtest.h>

#include <cstddef>
#include <fstream>
#include <iterator>
#include <map>
#include <set>
#include <string>

#include "kernels/core/kernel_key.h"
#include "kernels/ops/gemm/gemm_args.h"
#include "kernels/ops/rmsnorm/rmsnorm_args.h"

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

// Every op's launch ABI names its dims and tensors as fields of their kind
// (the registry refuses one that does not: AllOpSpecs would have thrown),
// tiles its struct without gaps beyond alignment, and every tensor spans the
// op's own dims with exactly one output.
TEST(OpRegistry, LaunchAbiNamesEveryDimAndTensorAsAStructField) {
  for (const OpSpec* spec : AllOpSpecs()) {
    SCOPED_TRACE(std::string(spec->name));
    EXPECT_GE(spec->abi.version, 2);
    EXPECT_EQ(spec->abi.struct_name, "tt_" + std::string(spec->name) + "_args");
    EXPECT_EQ(spec->abi.header,
              "ops/" + std::string(spec->name) + "/" + std::string(spec->name) + "_args.h");
    size_t end = 0;
    for (const AbiField& f : spec->abi.fields) {
      EXPECT_GE(f.offset, end) << f.name;
      EXPECT_LT(f.offset - end, alignof(void*)) << f.name << ": a gap the ABI does not list";
      end = f.offset + AbiFieldBytes(f.kind);
    }
    EXPECT_LT(spec->abi.size - end, spec->abi.alignment) << "fields missing at the end";
    std::set<std::string_view> dims;
    for (const DimArg& d : spec->dims) {
      dims.insert(d.name);
      ASSERT_NE(FindAbiField(*spec, d.name), nullptr) << d.name;
      EXPECT_EQ(FindAbiField(*spec, d.name)->kind, AbiKind::kInt64) << d.name;
    }
    int outputs = 0;
    for (const TensorArg& t : spec->tensors) {
      outputs += t.role == TensorRole::kOutput;
      ASSERT_NE(FindAbiField(*spec, t.name), nullptr) << t.name;
      EXPECT_EQ(FindAbiField(*spec, t.name)->kind, AbiKind::kTensor) << t.name;
      for (std::string_view d : t.dims) EXPECT_TRUE(dims.contains(d)) << t.name << ": " << d;
    }
    EXPECT_EQ(outputs, 1);
  }
  // Named for what they are: no x in a, no rows in m.
  const OpSpec& rmsnorm = OpSpecOf("rmsnorm");
  EXPECT_EQ(FindAbiField(rmsnorm, "x")->offset, offsetof(tt_rmsnorm_args, x));
  EXPECT_EQ(FindAbiField(rmsnorm, "w")->offset, offsetof(tt_rmsnorm_args, w));
  EXPECT_EQ(FindAbiField(rmsnorm, "rows")->offset, offsetof(tt_rmsnorm_args, rows));
  EXPECT_EQ(FindAbiField(rmsnorm, "eps")->kind, AbiKind::kFloat32);
  EXPECT_EQ(FindAbiField(rmsnorm, "a"), nullptr);
  EXPECT_EQ(FindAbiField(OpSpecOf("gemm"), "c")->offset, offsetof(tt_gemm_args, c));
}

// docs/kernel-abi.md documents every op's struct: a section per struct
// naming each of its fields, so the document cannot fall behind the code.
TEST(OpRegistry, KernelAbiDocumentNamesEveryField) {
  std::ifstream in(std::string(TILETUNE_SOURCE_DIR) + "/docs/kernel-abi.md");
  ASSERT_TRUE(in);
  const std::string doc{std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
  for (const OpSpec* spec : AllOpSpecs()) {
    const std::string heading = "### " + std::string(spec->abi.struct_name) + "\n";
    const size_t begin = doc.find(heading);
    ASSERT_NE(begin, std::string::npos) << heading;
    const std::string section = doc.substr(begin, doc.find("\n### ", begin + 1) - begin);
    EXPECT_NE(section.find(std::string(spec->abi.header)), std::string::npos) << heading;
    EXPECT_NE(section.find("version " + std::to_string(spec->abi.version)), std::string::npos)
        << heading;
    for (const AbiField& f : spec->abi.fields) {
      EXPECT_NE(section.find("`" + std::string(f.name) + "`"), std::string::npos)
          << spec->abi.struct_name << "." << f.name;
    }
  }
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
