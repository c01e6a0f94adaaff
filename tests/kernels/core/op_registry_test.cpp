#include "kernels/core/op_registry.h"

#include <gtest/gtest.h>

#include <cstddef>
#include <fstream>
#include <iterator>
#include <map>
#include <set>
#include <string>

#include "kernels/core/abi_description.h"
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
  EXPECT_EQ(OpNames(), "gemm, softmax, rmsnorm, layernorm, elementwise, attention");
  EXPECT_EQ(OpNames(FusionKind::kRowReduction), "softmax, rmsnorm, layernorm");
  EXPECT_EQ(KernelOpFor(FusionKind::kMatmul).name, "gemm");
  EXPECT_EQ(KernelOpFor(FusionKind::kElementwise).name, "elementwise");
  EXPECT_EQ(KernelOpFor(FusionKind::kAttention).name, "attention");
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

const v1::AbiField& AbiFieldOf(const v1::KernelAbi& abi, const std::string& name) {
  for (const auto& f : abi.fields()) {
    if (f.name() == name) return f;
  }
  throw std::out_of_range("no field " + name);
}

// What a client reads to fill a struct: offsets and sizes as registered,
// each tensor's role, dtype, shape and layout, the values the key fixes,
// the chain's slots.
TEST(LaunchAbiDescription, NamesShapesValuesAndChainSlotsForTheKey) {
  v1::KernelKey rms = Key("rmsnorm", v1::DTYPE_BF16, {{"rows", 7}, {"cols", 96}});
  rms.add_prologue()->set_op("residual_add");
  rms.set_write_prologue_output(true);
  rms.add_chain()->set_op("scale");
  const v1::KernelAbi abi = DescribeLaunchAbi(rms, v1::KernelAbi::PASSING_BY_VALUE);
  EXPECT_EQ(abi.struct_name(), "tt_rmsnorm_args");
  EXPECT_EQ(abi.struct_bytes(), static_cast<int64_t>(sizeof(tt_rmsnorm_args)));
  EXPECT_EQ(abi.max_chain(), TT_MAX_CHAIN);
  ASSERT_EQ(abi.fields_size(), static_cast<int>(OpSpecOf("rmsnorm").abi.fields.size()));
  EXPECT_EQ(AbiFieldOf(abi, "w").offset(), static_cast<int64_t>(offsetof(tt_rmsnorm_args, w)));
  EXPECT_EQ(AbiFieldOf(abi, "w").role(), v1::AbiField::ROLE_WEIGHT);
  EXPECT_EQ(AbiFieldOf(abi, "w").shape_size(), 1);
  EXPECT_EQ(AbiFieldOf(abi, "w").shape(0), 96);
  EXPECT_EQ(AbiFieldOf(abi, "y").dtype(), v1::DTYPE_BF16);
  const v1::AbiField& residual = AbiFieldOf(abi, "prologue_out");
  EXPECT_EQ(residual.role(), v1::AbiField::ROLE_PROLOGUE_OUTPUT);
  EXPECT_FALSE(residual.may_be_null()) << "the key writes it";
  EXPECT_EQ(AbiFieldOf(abi, "rows").value(), 7);
  EXPECT_EQ(AbiFieldOf(abi, "ldy").value(), 96);
  EXPECT_EQ(AbiFieldOf(abi, "eps").default_value(), 1e-5);
  const v1::AbiField& chain = AbiFieldOf(abi, "chain");
  ASSERT_EQ(chain.chain_size(), 2);  // the prologue's slot, then the chain's
  EXPECT_EQ(chain.chain(0).op(), "residual_add");
  EXPECT_TRUE(chain.chain(0).tensor());
  EXPECT_EQ(std::vector<int64_t>(chain.chain(0).shape().begin(), chain.chain(0).shape().end()),
            (std::vector<int64_t>{7, 96}));
  EXPECT_EQ(chain.chain(0).dtype(), v1::DTYPE_BF16);
  EXPECT_EQ(chain.chain(1).op(), "scale");
  EXPECT_TRUE(chain.chain(1).scalar());
  EXPECT_FALSE(chain.chain(1).tensor());

  v1::KernelKey gemm = Key("gemm", v1::DTYPE_F16, {{"m", 64}, {"n", 32}, {"k", 16}});
  auto* layout = gemm.add_layouts();
  layout->set_tensor("a");
  layout->set_layout(v1::LAYOUT_COL_MAJOR);
  gemm.add_chain()->set_op("bias");
  const v1::KernelAbi g = DescribeLaunchAbi(gemm, v1::KernelAbi::PASSING_POINTER);
  EXPECT_EQ(AbiFieldOf(g, "a").layout(), v1::LAYOUT_COL_MAJOR);
  EXPECT_EQ(AbiFieldOf(g, "b").layout(), v1::LAYOUT_ROW_MAJOR);
  EXPECT_EQ(AbiFieldOf(g, "lda").value(), 64) << "column-major a: lda = m";
  EXPECT_EQ(AbiFieldOf(g, "batch").value(), 1);
  EXPECT_EQ(AbiFieldOf(g, "chain").chain(0).shape(0), 32) << "bias: one value per column";
  EXPECT_THROW(DescribeLaunchAbi(Key("gemm", v1::DTYPE_F16, {{"m", 64}}), g.passing()),
               std::invalid_argument);
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
