#include "kernels/fusion/fusion_planner.h"

#include <gtest/gtest.h>

#include <stdexcept>

namespace tiletune::kernels::fusion {
namespace {

// Builds graph keys: dims, tensors and ops in the order they are added.
class GraphBuilder {
 public:
  GraphBuilder& Dim(const std::string& name, int64_t size) {
    auto* d = key_.add_shape();
    d->set_name(name);
    d->set_size(size);
    return *this;
  }
  GraphBuilder& Tensor(const std::string& name, std::vector<std::string> dims,
                       v1::DType dtype = v1::DTYPE_BF16) {
    auto* t = key_.add_tensors();
    t->set_name(name);
    for (auto& d : dims) t->add_dims(d);
    t->set_dtype(dtype);
    return *this;
  }
  GraphBuilder& Op(const std::string& op, std::vector<std::string> inputs,
                   const std::string& output) {
    auto* o = key_.add_ops();
    o->set_op(op);
    for (auto& i : inputs) o->add_inputs(i);
    o->set_output(output);
    return *this;
  }
  GraphBuilder& Scalar(double s) {
    key_.mutable_ops()->rbegin()->set_scalar(s);
    return *this;
  }
  GraphBuilder& Cast(v1::DType d) {
    key_.mutable_ops()->rbegin()->set_dtype(d);
    return *this;
  }
  GraphBuilder& Output(const std::string& name) {
    key_.add_outputs(name);
    return *this;
  }
  const v1::KernelKey& key() const { return key_; }

 private:
  v1::KernelKey key_;
};

// matmul(x, W) -> add(bias) -> gelu_tanh -> add(residual)
GraphBuilder GemmEpilogueGraph() {
  GraphBuilder g;
  g.Dim("m", 128).Dim("n", 14336).Dim("k", 4096);
  g.Tensor("x", {"m", "k"}).Tensor("w", {"k", "n"}).Tensor("bias", {"n"});
  g.Tensor("residual", {"m", "n"});
  g.Op("matmul", {"x", "w"}, "h").Op("add", {"h", "bias"}, "h1");
  g.Op("gelu_tanh", {"h1"}, "h2").Op("add", {"h2", "residual"}, "y");
  return g;
}

// add(x, residual) -> rmsnorm(w) -> cast(f16)
GraphBuilder ResidualNormGraph() {
  GraphBuilder g;
  g.Dim("t", 16384).Dim("d", 4096);
  g.Tensor("x", {"t", "d"}).Tensor("residual", {"t", "d"}).Tensor("w", {"d"});
  g.Op("add", {"x", "residual"}, "h").Op("rmsnorm", {"h", "w"}, "n");
  g.Op("cast", {"n"}, "y").Cast(v1::DTYPE_F16);
  return g;
}

// Why PlanFusion refuses the graph, or "planned" where it does not.
std::string PlanningError(const v1::KernelKey& graph) {
  try {
    PlanFusion(graph, {});
  } catch (const std::invalid_argument& e) {
    return e.what();
  }
  return "planned";
}

std::vector<std::string> ChainOps(const v1::KernelKey& key) {
  std::vector<std::string> ops;
  for (const auto& op : key.chain()) ops.push_back(op.op());
  return ops;
}

TEST(FusionPlanner, GemmEpilogueIsOneKernelWithTheOldKeysCanonicalString) {
  const auto plan = PlanFusion(GemmEpilogueGraph().key(), {});
  ASSERT_EQ(plan.kernels_size(), 1);
  const auto& kernel = plan.kernels(0);
  EXPECT_EQ(kernel.ops_size(), 4);
  EXPECT_EQ(kernel.split_reason(), "");
  EXPECT_EQ(ChainOps(kernel.key()),
            (std::vector<std::string>{"bias", "gelu_tanh", "residual_add"}));

  // The same problem as an op + chain key: one canonical string, one record.
  v1::KernelKey old;
  old.set_op("gemm");
  old.set_input_dtype(v1::DTYPE_BF16);
  for (const char* op : {"bias", "gelu_tanh", "residual_add"}) old.add_chain()->set_op(op);
  for (auto [name, size] : {std::pair{"m", 128}, {"n", 14336}, {"k", 4096}}) {
    auto* d = old.add_shape();
    d->set_name(name);
    d->set_size(size);
  }
  EXPECT_EQ(CanonicalKeyString(kernel.key()), CanonicalKeyString(old));
}

// matmul_t(x, W [2n, k]) -> swiglu -> add(residual): one gated GEMM (gate
// rows of W first), n the gated width, the add its chain.
TEST(FusionPlanner, MatmulTThenSwigluIsOneGatedGemm) {
  GraphBuilder g;
  g.Dim("t", 37).Dim("two_n", 2 * 1000).Dim("n", 1000).Dim("d", 512);
  g.Tensor("x", {"t", "d"}).Tensor("w_gate_up", {"two_n", "d"}).Tensor("res", {"t", "n"});
  g.Op("matmul_t", {"x", "w_gate_up"}, "h").Op("swiglu", {"h"}, "g").Op("add", {"g", "res"}, "y");
  const auto plan = PlanFusion(g.key(), {});
  ASSERT_EQ(plan.kernels_size(), 1);
  const v1::KernelKey& key = plan.kernels(0).key();
  EXPECT_EQ(plan.kernels(0).ops_size(), 3);
  EXPECT_EQ(key.gate(), v1::GATE_SWIGLU);
  EXPECT_EQ(ChainOps(key), std::vector<std::string>{"residual_add"});
  EXPECT_EQ(CanonicalKeyString(key),
            "gemm|chain=residual_add:bf16|in=bf16|out=bf16|acc=f32|layout=a:row,b:col|"
            "shape=k=512,m=37,n=1000|gate=swiglu");

  // Anywhere else swiglu has no kernel; an odd width cannot be halved.
  GraphBuilder alone;
  alone.Dim("t", 4).Dim("c", 8).Tensor("x", {"t", "c"}).Op("swiglu", {"x"}, "y");
  EXPECT_EQ(PlanningError(alone.key()),
            "key.ops[0]: swiglu gates the two halves of a matmul_t's output (weights [2n, k], the "
            "gate's rows first) and must follow it directly");
  GraphBuilder odd;
  odd.Dim("t", 4).Dim("c", 7).Tensor("x", {"t", "c"}).Op("swiglu", {"x"}, "y");
  const std::string odd_error = PlanningError(odd.key());
  EXPECT_NE(odd_error.find("key.ops[0].inputs[0]: swiglu halves the columns of [4, 7]: their "
                           "count must be even"),
            std::string::npos)
      << odd_error;
}

TEST(FusionPlanner, ResidualAddBecomesTheNormsPrologueAndCastItsEpilogue) {
  const auto plan = PlanFusion(ResidualNormGraph().key(), {});
  ASSERT_EQ(plan.kernels_size(), 1);
  const auto& key = plan.kernels(0).key();
  EXPECT_EQ(key.op(), "rmsnorm");
  ASSERT_EQ(key.prologue_size(), 1);
  EXPECT_EQ(key.prologue(0).op(), "residual_add");
  EXPECT_EQ(ChainOps(key), std::vector<std::string>{"cast"});
  EXPECT_EQ(key.input_dtype(), v1::DTYPE_BF16);
  EXPECT_EQ(key.output_dtype(), v1::DTYPE_F16);
  EXPECT_EQ(DimSize(key, "rows"), 16384);
  EXPECT_EQ(DimSize(key, "cols"), 4096);
  EXPECT_FALSE(ValidateKernelKey(key, {}));
  EXPECT_NE(CanonicalKeyString(key).find("|prologue=residual_add:bf16|"), std::string::npos);
}

// The transformer's residual stream: the sum feeds the norm and is an output
// itself, and the norm kernel writes both.
TEST(FusionPlanner, AWantedResidualSumIsWrittenByTheNormKernel) {
  for (const std::string norm : {"rmsnorm", "layernorm"}) {
    GraphBuilder g;
    g.Dim("t", 16384).Dim("d", 4096);
    g.Tensor("x", {"t", "d"}).Tensor("residual", {"t", "d"}).Tensor("w", {"d"});
    g.Tensor("b", {"d"});
    g.Op("add", {"x", "residual"}, "h");
    if (norm == "rmsnorm") {
      g.Op("rmsnorm", {"h", "w"}, "y");
    } else {
      g.Op("layernorm", {"h", "w", "b"}, "y");
    }
    g.Output("h").Output("y");
    const auto plan = PlanFusion(g.key(), {});
    ASSERT_EQ(plan.kernels_size(), 1) << norm;
    const auto& key = plan.kernels(0).key();
    EXPECT_EQ(key.op(), norm);
    EXPECT_EQ(plan.kernels(0).ops_size(), 2);
    ASSERT_EQ(key.prologue_size(), 1);
    EXPECT_TRUE(key.write_prologue_output());
    EXPECT_FALSE(ValidateKernelKey(key, {}));
    EXPECT_NE(CanonicalKeyString(key).find("|prologue=residual_add:bf16|prologue_out|"),
              std::string::npos)
        << CanonicalKeyString(key);
  }
}

// Where the norm cannot take the sum as its prologue, the kernel before it
// ends at the sum and writes it, and the norm reads it back.
TEST(FusionPlanner, AWantedSumThatCannotBeAPrologueEndsItsKernel) {
  auto g = ResidualNormGraph();
  g.Output("h").Output("y");
  KeyLimits limits;
  limits.max_chain_length = 1;
  auto plan = PlanFusion(g.key(), limits);
  ASSERT_EQ(plan.kernels_size(), 2);
  EXPECT_EQ(plan.kernels(0).key().op(), "elementwise");
  EXPECT_NE(plan.kernels(0).split_reason().find("max_chain_length"), std::string::npos);
  EXPECT_EQ(plan.kernels(1).key().op(), "rmsnorm");
  EXPECT_EQ(plan.kernels(1).key().prologue_size(), 0);
  EXPECT_FALSE(plan.kernels(1).key().write_prologue_output());

  // An element-wise op between the sum and the norm: the sum ends a kernel.
  GraphBuilder r;
  r.Dim("t", 4).Dim("d", 8);
  r.Tensor("x", {"t", "d"}).Tensor("residual", {"t", "d"}).Tensor("w", {"d"});
  r.Op("add", {"x", "residual"}, "h").Op("relu", {"h"}, "a").Op("rmsnorm", {"a", "w"}, "y");
  r.Output("h").Output("y");
  plan = PlanFusion(r.key(), {});
  ASSERT_EQ(plan.kernels_size(), 2);
  EXPECT_NE(plan.kernels(0).split_reason().find("'h' is a graph output"), std::string::npos);
  EXPECT_EQ(plan.kernels(1).key().prologue_size(), 1);
  EXPECT_FALSE(plan.kernels(1).key().write_prologue_output());
}

TEST(FusionPlanner, ScaleAndMaskFuseIntoSoftmax) {
  GraphBuilder g;
  g.Dim("q", 4096).Dim("s", 4097);
  g.Tensor("scores", {"q", "s"}, v1::DTYPE_F32).Tensor("mask", {"q", "s"}, v1::DTYPE_F32);
  g.Op("scale", {"scores"}, "a").Scalar(0.088).Op("add", {"a", "mask"}, "b");
  g.Op("softmax", {"b"}, "p");
  const auto plan = PlanFusion(g.key(), {});
  ASSERT_EQ(plan.kernels_size(), 1);
  const auto& key = plan.kernels(0).key();
  EXPECT_EQ(key.op(), "softmax");
  ASSERT_EQ(key.prologue_size(), 2);
  EXPECT_EQ(key.prologue(0).op(), "scale");
  EXPECT_DOUBLE_EQ(key.prologue(0).scalar(), 0.088);
  EXPECT_EQ(key.prologue(1).op(), "residual_add");
  EXPECT_EQ(key.chain_size(), 0);
}

TEST(FusionPlanner, LayernormAloneIsTheOldLayernormKey) {
  GraphBuilder g;
  g.Dim("t", 64).Dim("d", 33);
  g.Tensor("x", {"t", "d"}, v1::DTYPE_F32).Tensor("g", {"d"}, v1::DTYPE_F32);
  g.Tensor("b", {"d"}, v1::DTYPE_F32).Op("layernorm", {"x", "g", "b"}, "y");
  const auto plan = PlanFusion(g.key(), {});
  ASSERT_EQ(plan.kernels_size(), 1);
  EXPECT_EQ(CanonicalKeyString(plan.kernels(0).key()),
            "layernorm|chain=|in=f32|out=f32|acc=f32|layout=x:row|shape=cols=33,rows=64");
}

TEST(FusionPlanner, ElementwiseChainIsAnElementwiseKernelWithBiasPerColumn) {
  GraphBuilder g;
  g.Dim("r", 10).Dim("c", 7);
  g.Tensor("x", {"r", "c"}, v1::DTYPE_F32).Tensor("b", {"c"}, v1::DTYPE_F32);
  g.Op("add", {"x", "b"}, "h").Op("silu", {"h"}, "y");
  const auto plan = PlanFusion(g.key(), {});
  ASSERT_EQ(plan.kernels_size(), 1);
  EXPECT_EQ(plan.kernels(0).key().op(), "elementwise");
  EXPECT_EQ(ChainOps(plan.kernels(0).key()), (std::vector<std::string>{"bias", "silu"}));
}

TEST(FusionPlanner, SoftmaxAfterMatmulSplitsAndSaysWhy) {
  GraphBuilder g;
  g.Dim("m", 64).Dim("n", 128).Dim("k", 32);
  g.Tensor("x", {"m", "k"}).Tensor("w", {"k", "n"});
  g.Op("matmul", {"x", "w"}, "h").Op("scale", {"h"}, "s").Op("softmax", {"s"}, "p");
  g.Op("relu", {"p"}, "y");
  const auto plan = PlanFusion(g.key(), {});
  ASSERT_EQ(plan.kernels_size(), 2);
  EXPECT_EQ(plan.kernels(0).key().op(), "gemm");
  EXPECT_EQ(ChainOps(plan.kernels(0).key()), std::vector<std::string>{"scale"});
  EXPECT_NE(plan.kernels(0).split_reason().find("GEMM block tile owns only some columns"),
            std::string::npos);
  EXPECT_EQ(plan.kernels(1).key().op(), "softmax");
  EXPECT_EQ(DimSize(plan.kernels(1).key(), "rows"), 64);
  EXPECT_EQ(DimSize(plan.kernels(1).key(), "cols"), 128);
  EXPECT_EQ(ChainOps(plan.kernels(1).key()), std::vector<std::string>{"relu"});
  EXPECT_EQ((std::vector<int>(plan.kernels(1).ops().begin(), plan.kernels(1).ops().end())),
            (std::vector<int>{2, 3}));
}

TEST(FusionPlanner, TwoReductionsInARowSplit) {
  GraphBuilder g;
  g.Dim("r", 8).Dim("c", 8);
  g.Tensor("x", {"r", "c"}).Tensor("w", {"c"});
  g.Op("rmsnorm", {"x", "w"}, "n").Op("softmax", {"n"}, "p");
  const auto plan = PlanFusion(g.key(), {});
  ASSERT_EQ(plan.kernels_size(), 2);
  EXPECT_NE(plan.kernels(0).split_reason().find("two row reductions"), std::string::npos);
}

TEST(FusionPlanner, AWantedIntermediateAndACastEndKernels) {
  auto g = ResidualNormGraph();
  g.Output("n").Output("y");
  auto plan = PlanFusion(g.key(), {});
  ASSERT_EQ(plan.kernels_size(), 2);
  EXPECT_EQ(plan.kernels(0).key().op(), "rmsnorm");
  EXPECT_NE(plan.kernels(0).split_reason().find("'n' is a graph output"), std::string::npos);
  EXPECT_FALSE(plan.kernels(0).key().write_prologue_output());
  EXPECT_EQ(plan.kernels(1).key().op(), "elementwise");

  GraphBuilder c;
  c.Dim("r", 4).Dim("c", 4).Tensor("x", {"r", "c"}, v1::DTYPE_F32);
  c.Op("cast", {"x"}, "h").Cast(v1::DTYPE_BF16).Op("relu", {"h"}, "y");
  plan = PlanFusion(c.key(), {});
  ASSERT_EQ(plan.kernels_size(), 2);
  EXPECT_NE(plan.kernels(0).split_reason().find("cast ends a kernel"), std::string::npos);
  EXPECT_EQ(plan.kernels(1).key().input_dtype(), v1::DTYPE_BF16);
}

TEST(FusionPlanner, LongChainsSplitAtTheChainLimit) {
  GraphBuilder g;
  g.Dim("r", 4).Dim("c", 4).Tensor("x", {"r", "c"}, v1::DTYPE_F32);
  std::string in = "x";
  for (int i = 0; i < 5; ++i) {
    g.Op("relu", {in}, "t" + std::to_string(i));
    in = "t" + std::to_string(i);
  }
  KeyLimits limits;
  limits.max_chain_length = 2;
  const auto plan = PlanFusion(g.key(), limits);
  ASSERT_EQ(plan.kernels_size(), 3);
  EXPECT_NE(plan.kernels(0).split_reason().find("max_chain_length 2"), std::string::npos);
}

std::string ErrorField(const v1::KernelKey& key) {
  const auto e = ValidateKernelKey(key, {});
  return e ? e->field : "";
}

// matmul_t(q, k) -> scale -> [mask] -> softmax -> matmul(., v) -> [then]
GraphBuilder AttentionGraph(int64_t head_dim, const std::string& mask) {
  GraphBuilder g;
  g.Dim("s", 77).Dim("t", 131).Dim("d", head_dim);
  g.Tensor("q", {"s", "d"}).Tensor("k", {"t", "d"}).Tensor("v", {"t", "d"});
  g.Op("matmul_t", {"q", "k"}, "scores").Op("scale", {"scores"}, "scaled").Scalar(0.125);
  std::string into_softmax = "scaled";
  if (mask == "causal") {
    g.Op("causal_mask", {"scaled"}, "masked");
    into_softmax = "masked";
  } else if (mask == "tensor") {
    g.Tensor("mask", {"s", "t"}).Op("add", {"scaled", "mask"}, "masked");
    into_softmax = "masked";
  }
  g.Op("softmax", {into_softmax}, "p").Op("matmul", {"p", "v"}, "o");
  return g;
}

TEST(FusionPlanner, AttentionIsOneKernel) {
  for (const auto& [mask, kind] : {std::pair{"", v1::ATTENTION_MASK_NONE},
                                   {"causal", v1::ATTENTION_MASK_CAUSAL},
                                   {"tensor", v1::ATTENTION_MASK_TENSOR}}) {
    SCOPED_TRACE(mask);
    const auto plan = PlanFusion(AttentionGraph(128, mask).key(), {});
    ASSERT_EQ(plan.kernels_size(), 1);
    const v1::KernelKey& key = plan.kernels(0).key();
    EXPECT_EQ(key.op(), "attention");
    EXPECT_EQ(key.attention_mask(), kind);
    EXPECT_EQ(CanonicalKeyString(key),
              "attention|chain=|in=bf16|out=bf16|acc=f32|layout=|shape=head_dim=128,kv_heads=1,"
              "kv_len=131,q_heads=1,q_len=77|mask=" +
                  std::string(AttentionMaskName(kind)) + "|seq=bshd");
    EXPECT_EQ(plan.kernels(0).ops_size(), std::string(mask).empty() ? 4 : 5);
    EXPECT_EQ(plan.kernels(0).split_reason(), "");
  }
}

TEST(FusionPlanner, ElementwiseOpsAfterAttentionAreItsChain) {
  GraphBuilder g = AttentionGraph(64, "causal");
  g.Tensor("residual", {"s", "d"}).Op("add", {"o", "residual"}, "y");
  const auto plan = PlanFusion(g.key(), {});
  ASSERT_EQ(plan.kernels_size(), 1);
  EXPECT_EQ(ChainOps(plan.kernels(0).key()), std::vector<std::string>{"residual_add"});
}

TEST(FusionPlanner, AttentionShapedGraphsTheKernelCannotTakeSayWhy) {
  // head_dim 96: matmul (b column-major), softmax, matmul.
  auto plan = PlanFusion(AttentionGraph(96, "").key(), {});
  ASSERT_EQ(plan.kernels_size(), 3);
  EXPECT_EQ(plan.kernels(0).key().op(), "gemm");
  EXPECT_EQ(plan.kernels(0).key().layouts(1).tensor(), "b");
  EXPECT_EQ(plan.kernels(0).key().layouts(1).layout(), v1::LAYOUT_COL_MAJOR);
  EXPECT_NE(plan.kernels(0).split_reason().find(
                "; not one attention kernel: head_dim 96 is not 64, 128 or 256"),
            std::string::npos)
      << plan.kernels(0).split_reason();
  // The probabilities wanted as an output.
  GraphBuilder wanted = AttentionGraph(64, "");
  wanted.Output("p").Output("o");
  plan = PlanFusion(wanted.key(), {});
  ASSERT_GE(plan.kernels_size(), 2);
  EXPECT_NE(plan.kernels(0).split_reason().find(
                "not one attention kernel: 'p' is a graph output, and attention keeps softmax's "
                "result in registers"),
            std::string::npos)
      << plan.kernels(0).split_reason();
  // A causal mask only exists inside attention.
  EXPECT_EQ(PlanningError(AttentionGraph(96, "causal").key()),
            "key.ops[2]: causal_mask runs only inside attention (matmul_t -> [scale] -> "
            "causal_mask -> softmax -> matmul); not one attention kernel: head_dim 96 is not "
            "64, 128 or 256");
}

TEST(OpGraphValidation, MatmulTReadsBStoredTransposed) {
  GraphBuilder g;
  g.Dim("m", 8).Dim("n", 16).Dim("k", 32);
  g.Tensor("a", {"m", "k"}).Tensor("b", {"k", "n"});
  g.Op("matmul_t", {"a", "b"}, "c");
  const auto error = ValidateKernelKey(g.key(), {});
  ASSERT_TRUE(error);
  EXPECT_EQ(error->ToString(),
            "key.ops[0].inputs[1]: matmul_t of [8, 32] needs B shaped [N, 32], got [32, 16]");
}

TEST(OpGraphValidation, ErrorsNameTheField) {
  auto g = GemmEpilogueGraph();
  v1::KernelKey key = g.key();
  key.mutable_tensors(1)->set_dims(0, "m");  // W [m, n] does not match x [m, k]
  EXPECT_EQ(ErrorField(key), "key.ops[0].inputs[1]");

  key = g.key();
  key.mutable_tensors(2)->set_dims(0, "m");  // bias [m] is neither [n] nor [m, n]
  EXPECT_EQ(ErrorField(key), "key.ops[1].inputs[1]");

  key = g.key();
  key.mutable_ops(2)->set_inputs(0, "h");  // skips the previous op
  EXPECT_EQ(ErrorField(key), "key.ops[2].inputs[0]");

  key = g.key();
  key.mutable_ops(3)->set_inputs(1, "h1");  // an op output as a side operand
  EXPECT_EQ(ErrorField(key), "key.ops[3].inputs[1]");

  key = g.key();
  key.mutable_ops(1)->set_op("conv");
  EXPECT_EQ(ErrorField(key), "key.ops[1].op");

  key = g.key();
  key.mutable_tensors(1)->set_dtype(v1::DTYPE_F32);  // x bf16, W f32
  EXPECT_EQ(ErrorField(key), "key.ops[0].inputs[1]");

  key = g.key();
  key.mutable_tensors(0)->set_dims(1, "z");
  EXPECT_EQ(ErrorField(key), "key.tensors[0].dims[1]");

  key = g.key();
  key.set_op("gemm");
  EXPECT_EQ(ErrorField(key), "key.op");

  key = g.key();
  key.add_outputs("nothing");
  EXPECT_EQ(ErrorField(key), "key.outputs[0]");

  key = ResidualNormGraph().key();
  key.mutable_ops(2)->set_dtype(v1::DTYPE_UNSPECIFIED);
  EXPECT_EQ(ErrorField(key), "key.ops[2].dtype");

  key = ResidualNormGraph().key();
  key.mutable_tensors(2)->set_dtype(v1::DTYPE_F32);  // norm weight type differs from x
  EXPECT_EQ(ErrorField(key), "key.ops[1].inputs[1]");

  EXPECT_THROW(PlanFusion(key, {}), std::invalid_argument);
  EXPECT_THROW(CanonicalKeyString(g.key()), std::invalid_argument);
}

TEST(KernelKeyPrologue, OnlyRowAndElementwiseKernelsTakeOneAndCastIsNotPartOfIt) {
  v1::KernelKey key;
  key.set_op("softmax");
  key.set_input_dtype(v1::DTYPE_F32);
  for (auto [name, size] : {std::pair{"rows", 4}, {"cols", 4}}) {
    auto* d = key.add_shape();
    d->set_name(name);
    d->set_size(size);
  }
  key.add_prologue()->set_op("scale");
  EXPECT_FALSE(ValidateKernelKey(key, {}));
  key.add_prologue()->set_op("cast");
  key.mutable_prologue(1)->set_dtype(v1::DTYPE_F16);
  EXPECT_EQ(ErrorField(key), "key.prologue[1].op");
  key.mutable_prologue(1)->set_op("frobnicate");
  EXPECT_EQ(ErrorField(key), "key.prologue[1].op");
}

TEST(KernelKeyPrologue, OnlyARowOpWithAPrologueWritesItsOutput) {
  v1::KernelKey key;
  key.set_op("rmsnorm");
  key.set_input_dtype(v1::DTYPE_F32);
  for (auto [name, size] : {std::pair{"rows", 4}, {"cols", 4}}) {
    auto* d = key.add_shape();
    d->set_name(name);
    d->set_size(size);
  }
  key.set_write_prologue_output(true);
  EXPECT_EQ(ErrorField(key), "key.write_prologue_output");
  key.add_prologue()->set_op("residual_add");
  EXPECT_FALSE(ValidateKernelKey(key, {}));
  key.set_op("elementwise");
  EXPECT_EQ(ErrorField(key), "key.write_prologue_output");

  auto graph = ResidualNormGraph().key();
  graph.set_write_prologue_output(true);
  EXPECT_EQ(ErrorField(graph), "key.write_prologue_output");
}

TEST(OpGraphValidation, NamesPastMaxNameBytesAreRefusedAndErrorsQuoteAShortPrefix) {
  const std::string long_name(257, 't');
  const auto error = [](const v1::KernelKey& key, const KeyLimits& limits) {
    auto e = ValidateKernelKey(key, limits);
    return e ? e->ToString() : "";
  };
  const std::string limit = ": is 257 bytes; the limit is max_name_bytes 256";
  auto key = GemmEpilogueGraph().key();
  key.mutable_tensors(1)->set_name(long_name);
  EXPECT_EQ(error(key, {}), "key.tensors[1].name" + limit);
  key = GemmEpilogueGraph().key();
  key.mutable_tensors(1)->set_dims(0, long_name);
  EXPECT_EQ(error(key, {}), "key.tensors[1].dims[0]" + limit);
  key = GemmEpilogueGraph().key();
  key.mutable_ops(1)->set_op(long_name);
  EXPECT_EQ(error(key, {}), "key.ops[1].op" + limit);
  key = GemmEpilogueGraph().key();
  key.mutable_ops(1)->set_inputs(1, long_name);
  EXPECT_EQ(error(key, {}), "key.ops[1].inputs[1]" + limit);
  key = GemmEpilogueGraph().key();
  key.mutable_ops(3)->set_output(long_name);
  EXPECT_EQ(error(key, {}), "key.ops[3].output" + limit);
  key = GemmEpilogueGraph().key();
  key.add_outputs(long_name);
  EXPECT_EQ(error(key, {}), "key.outputs[0]" + limit);

  // Allowed by a raised limit, a huge name is still quoted short.
  KeyLimits roomy;
  roomy.max_name_bytes = 1 << 20;
  const std::string huge(8192, 'u');
  const std::string shown = "'" + std::string(32, 'u') + "…' (8192 bytes)";
  key = GemmEpilogueGraph().key();
  key.mutable_ops(1)->set_inputs(1, huge);
  EXPECT_EQ(error(key, roomy),
            "key.ops[1].inputs[1]: tensor " + shown + " is not declared in tensors");
  key = GemmEpilogueGraph().key();
  key.mutable_ops(1)->set_op(huge);
  EXPECT_EQ(error(key, roomy).rfind("key.ops[1].op: unknown op " + shown + " (known: ", 0), 0u);
  key = GemmEpilogueGraph().key();
  key.add_outputs(huge);
  EXPECT_EQ(error(key, roomy), "key.outputs[0]: " + shown + " is not the output of an op");
  key = GemmEpilogueGraph().key();
  key.mutable_tensors(0)->set_dims(1, huge);
  EXPECT_EQ(error(key, roomy),
            "key.tensors[0].dims[1]: dimension " + shown + " has no size in shape");
}

}  // namespace
}  // namespace tiletune::kernels::fusion
