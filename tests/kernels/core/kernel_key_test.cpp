#include "kernels/core/kernel_key.h"
#include "tests/support/test_key.h"

#include <gtest/gtest.h>

namespace tiletune::kernels {
namespace {

const auto Gemm = [](int64_t m, int64_t n, int64_t k) { return testing::GemmShapeKey(m, n, k); };
using testing::RowsTestKey;

TEST(KernelKey, ValidGemmPasses) {
  EXPECT_FALSE(ValidateKernelKey(Gemm(64, 64, 64), {}));
}

TEST(KernelKey, UnknownOpNamesTheField) {
  auto key = Gemm(1, 1, 1);
  key.set_op("conv");
  auto err = ValidateKernelKey(key, {});
  ASSERT_TRUE(err);
  EXPECT_EQ(err->field, "key.op");
}

TEST(KernelKey, NegativeDimNamesItsIndex) {
  auto err = ValidateKernelKey(Gemm(64, -3, 64), {});
  ASSERT_TRUE(err);
  EXPECT_EQ(err->field, "key.shape[1].size");
}

TEST(KernelKey, AbsurdDimsHitTheLimits) {
  KeyLimits limits;
  limits.max_dim = 1000;
  EXPECT_EQ(ValidateKernelKey(Gemm(64, 1001, 64), limits)->field, "key.shape[1].size");
  limits.max_dim = 1 << 20;
  limits.max_elements = 1000;
  EXPECT_EQ(ValidateKernelKey(Gemm(64, 64, 64), limits)->field, "key.shape");
}

TEST(KernelKey, MaxElementsBoundsTheLargestTensorNotTheFlopCount) {
  // 4096 x 14336 x 4096: 2.4e11 as a product, no tensor above 5.9e7.
  EXPECT_FALSE(ValidateKernelKey(Gemm(4096, 14336, 4096), {}));
  KeyLimits limits;
  limits.max_elements = 4096 * 14336 - 1;
  EXPECT_EQ(ValidateKernelKey(Gemm(16, 14336, 4096), limits)->field, "key.shape");
}

TEST(KernelKey, MissingDimAndUnsupportedDtype) {
  auto key = Gemm(8, 8, 8);
  key.mutable_shape()->RemoveLast();
  EXPECT_EQ(ValidateKernelKey(key, {})->field, "key.shape");
  key = Gemm(8, 8, 8);
  key.set_input_dtype(v1::DTYPE_UNSPECIFIED);
  EXPECT_EQ(ValidateKernelKey(key, {})->field, "key.input_dtype");
  key.set_input_dtype(static_cast<v1::DType>(42));
  EXPECT_EQ(ValidateKernelKey(key, {})->field, "key.input_dtype");
}

TEST(KernelKey, UnknownChainOpAndMisplacedCast) {
  auto key = Gemm(8, 8, 8);
  key.add_chain()->set_op("tanh");
  EXPECT_EQ(ValidateKernelKey(key, {})->field, "key.chain[0].op");
  key = Gemm(8, 8, 8);
  auto* cast = key.add_chain();
  cast->set_op("cast");
  cast->set_dtype(v1::DTYPE_BF16);
  key.add_chain()->set_op("relu");
  EXPECT_EQ(ValidateKernelKey(key, {})->field, "key.chain[0]");
}

TEST(KernelKey, CanonicalStringIgnoresOrderDefaultsAndScaleValue) {
  auto a = Gemm(128, 256, 64);
  auto b = a;
  std::reverse(b.mutable_shape()->begin(), b.mutable_shape()->end());
  auto* layout = b.add_layouts();
  layout->set_tensor("a");
  layout->set_layout(v1::LAYOUT_ROW_MAJOR);
  b.set_output_dtype(v1::DTYPE_F32);
  a.add_chain()->set_op("scale");
  a.mutable_chain(0)->set_scalar(0.5);
  b.add_chain()->set_op("scale");
  b.mutable_chain(0)->set_scalar(2.0);
  EXPECT_EQ(CanonicalKeyString(a), CanonicalKeyString(b));
  EXPECT_EQ(
      CanonicalKeyString(a),
      "gemm|chain=scale:f32|in=f32|out=f32|acc=f32|layout=a:row,b:row|shape=k=64,m=128,n=256");
}

TEST(KernelKey, AllowTf32IsPartOfTheKeyOnlyWhenSet) {
  auto exact = Gemm(128, 256, 64);
  auto tf32 = exact;
  tf32.set_allow_tf32(true);
  // Keys stored before the field existed keep their canonical strings.
  EXPECT_EQ(CanonicalKeyString(exact),
            "gemm|chain=|in=f32|out=f32|acc=f32|layout=a:row,b:row|shape=k=64,m=128,n=256");
  EXPECT_EQ(CanonicalKeyString(tf32), CanonicalKeyString(exact) + "|tf32");
  EXPECT_FALSE(ValidateKernelKey(tf32, {}));
}

TEST(KernelKey, AllowTf32NeedsAnF32Gemm) {
  auto bf16 = Gemm(8, 8, 8);
  bf16.set_input_dtype(v1::DTYPE_BF16);
  bf16.set_allow_tf32(true);
  auto err = ValidateKernelKey(bf16, {});
  ASSERT_TRUE(err);
  EXPECT_EQ(err->field, "key.allow_tf32");
  EXPECT_NE(err->message.find("bf16"), std::string::npos) << err->message;

  v1::KernelKey softmax = RowsTestKey("softmax", 4, 4);
  softmax.set_allow_tf32(true);
  err = ValidateKernelKey(softmax, {});
  ASSERT_TRUE(err);
  EXPECT_EQ(err->field, "key.allow_tf32");
}

// A gated gemm is another problem: its string says so; a key without a
// gate keeps the string it had before the field existed. Only gemm takes one.
TEST(KernelKey, AGateIsPartOfAGemmKeyOnly) {
  auto plain = Gemm(128, 256, 64);
  auto gated = plain;
  gated.set_gate(v1::GATE_SWIGLU);
  EXPECT_FALSE(ValidateKernelKey(gated, {}));
  EXPECT_EQ(CanonicalKeyString(gated), CanonicalKeyString(plain) + "|gate=swiglu");
  EXPECT_EQ(ProblemFlops(gated), 2 * ProblemFlops(plain));
  // b_up, as large as b (64 x 256 f32), besides A, B and C.
  EXPECT_EQ(ProblemBytes(gated), ProblemBytes(plain) + 64 * 256 * 4);

  gated.set_gate(static_cast<v1::Gate>(7));
  auto err = ValidateKernelKey(gated, {});
  ASSERT_TRUE(err);
  EXPECT_EQ(err->ToString(), "key.gate: must be none or swiglu");

  v1::KernelKey softmax = RowsTestKey("softmax", 4, 4);
  softmax.set_gate(v1::GATE_SWIGLU);
  err = ValidateKernelKey(softmax, {});
  ASSERT_TRUE(err);
  EXPECT_EQ(err->ToString(), "key.gate: belongs to gemm; this key is softmax");
}

TEST(KernelKey, DifferentShapesDiffer) {
  EXPECT_NE(CanonicalKeyString(Gemm(1, 2, 3)), CanonicalKeyString(Gemm(1, 2, 4)));
}

TEST(KernelKey, RowOpsNeedRowsAndCols) {
  v1::KernelKey key;
  key.set_op("softmax");
  key.set_input_dtype(v1::DTYPE_F32);
  auto* d = key.add_shape();
  d->set_name("m");
  d->set_size(4);
  EXPECT_EQ(ValidateKernelKey(key, {})->field, "key.shape[0].name");
}

TEST(KernelKey, QuotedShowsAShortPrefixAndTheSizeOfALongValue) {
  EXPECT_EQ(Quoted("conv"), "'conv'");
  EXPECT_EQ(Quoted(std::string(32, 'a')), "'" + std::string(32, 'a') + "'");
  EXPECT_EQ(Quoted(std::string(8192, 'a')), "'" + std::string(32, 'a') + "…' (8192 bytes)");
  // Never half a character: "é" is two bytes.
  std::string accents;
  for (int i = 0; i < 40; ++i) accents += "é";
  EXPECT_EQ(Abbreviated(accents, 5), "éé…");
  EXPECT_EQ(Abbreviated("short", 5), "short");
}

TEST(KernelKey, NamesPastMaxNameBytesAreRefusedNamingTheFieldAndTheLimit) {
  const std::string long_name(257, 'x');
  const auto error = [](const v1::KernelKey& key) {
    auto e = ValidateKernelKey(key, {});
    return e ? e->ToString() : "";
  };
  auto key = Gemm(8, 8, 8);
  key.set_op(long_name);
  EXPECT_EQ(error(key), "key.op: is 257 bytes; the limit is max_name_bytes 256");
  key = Gemm(8, 8, 8);
  key.mutable_shape(1)->set_name(long_name);
  EXPECT_EQ(error(key), "key.shape[1].name: is 257 bytes; the limit is max_name_bytes 256");
  key = Gemm(8, 8, 8);
  key.add_chain()->set_op("bias");
  key.add_chain()->set_op(long_name);
  EXPECT_EQ(error(key), "key.chain[1].op: is 257 bytes; the limit is max_name_bytes 256");
  key = RowsTestKey("rmsnorm", 8, 8);
  key.add_prologue()->set_op(long_name);
  EXPECT_EQ(error(key), "key.prologue[0].op: is 257 bytes; the limit is max_name_bytes 256");
  key = Gemm(8, 8, 8);
  auto* layout = key.add_layouts();
  layout->set_tensor(long_name);
  layout->set_layout(v1::LAYOUT_COL_MAJOR);
  EXPECT_EQ(error(key), "key.layouts[0].tensor: is 257 bytes; the limit is max_name_bytes 256");

  // At the limit a name is judged as any other.
  key = Gemm(8, 8, 8);
  key.set_op(std::string(256, 'x'));
  EXPECT_EQ(ValidateKernelKey(key, {})->message.rfind("unknown op 'xxx", 0), 0u);
  KeyLimits limits;
  limits.max_name_bytes = 8;
  key = Gemm(8, 8, 8);
  key.set_op("softmax_");
  EXPECT_EQ(ValidateKernelKey(key, limits)->message.rfind("unknown op", 0), 0u);
  key.set_op("softmax__");
  EXPECT_EQ(ValidateKernelKey(key, limits)->message, "is 9 bytes; the limit is max_name_bytes 8");
}

TEST(KernelKey, ErrorsQuoteOnlyAShortPrefixOfABadValue) {
  KeyLimits roomy;
  roomy.max_name_bytes = 1 << 20;
  const std::string huge(66 * 1024, 'a');
  const std::string shown = "'" + std::string(32, 'a') + "…' (67584 bytes)";
  const auto message = [&](const v1::KernelKey& key) {
    auto e = ValidateKernelKey(key, roomy);
    EXPECT_TRUE(e);
    EXPECT_LT(e ? e->message.size() : 0, 200u);
    return e ? e->message : "";
  };
  auto key = Gemm(8, 8, 8);
  key.set_op(huge);
  EXPECT_EQ(message(key).rfind("unknown op " + shown + " (known: ", 0), 0u) << message(key);
  key = Gemm(8, 8, 8);
  key.mutable_shape(1)->set_name(huge);
  EXPECT_EQ(message(key).rfind(shown + " is not a dimension of gemm", 0), 0u) << message(key);
  key = Gemm(8, 8, 8);
  key.add_chain()->set_op(huge);
  EXPECT_EQ(message(key).rfind("unknown chain op " + shown, 0), 0u) << message(key);
  key = Gemm(8, 8, 8);
  auto* layout = key.add_layouts();
  layout->set_tensor(huge);
  layout->set_layout(v1::LAYOUT_COL_MAJOR);
  EXPECT_EQ(message(key).rfind(shown + " is not a tensor of gemm", 0), 0u) << message(key);
}

}  // namespace
TEST(KernelKey, ProblemBytesCountsAGemmsOperandsAndChainTensorsOncePerBatch) {
  auto key = Gemm(128, 256, 64);
  key.set_input_dtype(v1::DTYPE_BF16);
  auto* batch = key.add_shape();
  batch->set_name("batch");
  batch->set_size(2);
  key.add_chain()->set_op("bias");  // bf16, like the output
  auto* residual = key.add_chain();
  residual->set_op("residual_add");
  residual->set_dtype(v1::DTYPE_F32);
  // A 2*128*64*2 + B 2*64*256*2 + C 2*128*256*2 + bias 256*2 + residual 2*128*256*4.
  EXPECT_EQ(ProblemBytes(key), 32768 + 65536 + 131072 + 512 + 262144);
}

TEST(KernelKey, ProblemBytesCountsANormsWeightPrologueAndItsSecondOutput) {
  v1::KernelKey key;
  key.set_op("rmsnorm");
  key.set_input_dtype(v1::DTYPE_BF16);
  key.set_output_dtype(v1::DTYPE_F32);
  for (auto [name, size] : {std::pair{"rows", 8}, {"cols", 1024}}) {
    auto* d = key.add_shape();
    d->set_name(name);
    d->set_size(size);
  }
  key.add_prologue()->set_op("residual_add");  // bf16, like the input
  key.set_write_prologue_output(true);
  // x 8*1024*2 + y 8*1024*4 + weight 1024*2 + residual 8*1024*2 + x+residual 8*1024*2.
  EXPECT_EQ(ProblemBytes(key), 16384 + 32768 + 2048 + 16384 + 16384);
}

}  // namespace tiletune::kernels
