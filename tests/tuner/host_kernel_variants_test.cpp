// Every host template, for at least one key: all variants of a small space
// and a sample of a larger one, plus the baseline, handed to the real
// compiler and validated by the real worker against the float64 reference.
#include <gtest/gtest.h>

#include <thread>

#include "kernels/core/key_space.h"
#include "tests/support/gemm_test_key.h"
#include "tests/tuner/host_kernel_fixture.h"

namespace tiletune::tuner {
namespace {

using namespace std::chrono_literals;
using testing::MakeKey;

v1::KernelKey WithCastToF32(v1::KernelKey key) {
  auto* cast = key.add_chain();
  cast->set_op("cast");
  cast->set_dtype(v1::DTYPE_F32);
  return key;
}

// Compiles (two at a time) and validates every source; a failure names the
// variant.
void CompileAndValidate(
    const std::vector<std::pair<v1::KernelKey, kernels::KernelSource>>& kernels) {
  std::vector<worker::v1::BenchRequest> requests(kernels.size());
  std::vector<std::thread> compilers;
  for (size_t first : {0, 1}) {
    compilers.emplace_back([&, first] {
      for (size_t i = first; i < kernels.size(); i += 2) {
        requests[i] = testing::CompileRequest(kernels[i].first, kernels[i].second);
      }
    });
  }
  for (auto& c : compilers) c.join();
  BenchmarkWorker worker({testing::WorkerBinary(), {}});
  for (size_t i = 0; i < kernels.size(); ++i) {
    const auto result = worker.Run(requests[i], 30s);
    EXPECT_EQ(result.outcome, BenchmarkWorker::Outcome::kOk)
        << kernels[i].second.kernel_name << " " << OutcomeName(result.outcome) << ": "
        << result.error << "\n"
        << kernels[i].second.code;
  }
}

// The worker's answer to a request for `wanted` that runs the first variant
// compiled for `compiled_for`: a kernel missing what `wanted` adds.
BenchmarkWorker::Result RunCompiledFor(const v1::KernelKey& compiled_for,
                                       const v1::KernelKey& wanted) {
  const kernels::KernelTemplate& t = testing::HostTemplate(compiled_for);
  const worker::v1::BenchRequest request = testing::CompileRequest(
      wanted, t.Source(compiled_for, t.Space(compiled_for).ValidVariants().at(0)));
  BenchmarkWorker worker({testing::WorkerBinary(), {}});
  return worker.Run(request, 30s);
}

// All of `small`'s space, the first and last valid variants of `large`'s,
// and the baseline for `small`.
std::vector<std::pair<v1::KernelKey, kernels::KernelSource>> Sources(const v1::KernelKey& small,
                                                                     const v1::KernelKey& large,
                                                                     size_t small_space_size) {
  const kernels::KernelTemplate& t = testing::HostTemplate(small);
  std::vector<std::pair<v1::KernelKey, kernels::KernelSource>> out;
  const auto all = t.Space(small).ValidVariants();
  EXPECT_EQ(all.size(), small_space_size);
  for (const auto& v : all) out.emplace_back(small, t.Source(small, v));
  const auto sample = t.Space(large).ValidVariants();
  for (const auto& v : {sample.front(), sample.back()}) out.emplace_back(large, t.Source(large, v));
  out.emplace_back(small, *t.BaselineFor(small).source);
  return out;
}

TEST(HostKernelVariants, Gemm) {
  const v1::KernelKey small =
      WithCastToF32(MakeKey("gemm", {{"m", 8}, {"n", 16}, {"k", 8}}, {"bias", "relu", "scale"}));
  const v1::KernelKey large =
      MakeKey("gemm", {{"m", 130}, {"n", 300}, {"k", 270}}, {"gelu_erf", "residual_add"});
  CompileAndValidate(Sources(small, large, 8));
}

// The GEMM baseline, OpenBLAS's sgemm and the chain pass, over every
// layout of A and B, batched, with odd sizes and a chain that reads
// tensors; and the straightforward kernel where OpenBLAS does not link.
TEST(HostKernelVariants, GemmBaselines) {
  const std::vector<testing::TestChainOp> chain = {"scale", "residual_add", "gelu_tanh", "bias"};
  std::vector<std::pair<v1::KernelKey, kernels::KernelSource>> sources;
  kernels::DeviceDescription without = kernels::kHostCpu;
  without.has_openblas = false;
  for (const bool a_col : {false, true}) {
    for (const bool b_col : {false, true}) {
      const v1::KernelKey key =
          testing::GemmTestKey(37, 70, 33, 3, v1::DTYPE_F32, v1::DTYPE_F32, a_col, b_col, chain);
      const kernels::KernelTemplate& t = testing::HostTemplate(key);
      for (const bool openblas : {true, false}) {
        const kernels::Baseline baseline =
            t.BaselineFor(key, openblas ? kernels::kHostCpu : without);
        EXPECT_EQ(baseline.name, openblas ? "openblas_sgemm" : "host-naive");
        sources.emplace_back(key, *baseline.source);
      }
    }
  }
  // Large enough for OpenBLAS's threads and a chain pass on both.
  const v1::KernelKey large =
      testing::GemmTestKey(300, 290, 310, 1, v1::DTYPE_F32, v1::DTYPE_F32, false, false, chain);
  sources.emplace_back(large, *testing::HostTemplate(large).BaselineFor(large).source);
  CompileAndValidate(sources);
}

// host_gemm_rowwise reads B as it lies: rows of a row-major B, dot products
// with the columns of a column-major one; every layout, batched, both
// thread counts.
TEST(HostKernelVariants, GemmRowwiseOverEveryLayout) {
  std::vector<std::pair<v1::KernelKey, kernels::KernelSource>> sources;
  for (const bool a_col : {false, true}) {
    for (const bool b_col : {false, true}) {
      const v1::KernelKey key = testing::GemmTestKey(5, 70, 37, 2, v1::DTYPE_F32, v1::DTYPE_F32,
                                                     a_col, b_col, {"bias", "residual_add"});
      const kernels::KeySpace space = kernels::KeySpace::Of(key, kernels::kHostCpu, nullptr);
      for (const kernels::Variant& v : space.ValidVariants()) {
        const kernels::KernelTemplate& family = space.TemplateOf(v);
        if (family.name() != "host_gemm_rowwise") continue;
        sources.emplace_back(key, family.Source(key, kernels::OwnParameters(v)));
      }
    }
  }
  EXPECT_EQ(sources.size(), 8u);  // 4 layouts x threads 1, 2
  CompileAndValidate(sources);
}

// A gated GEMM (silu(A·B) ⊙ (A·B_up), then the chain): host_gemm_rowwise
// over every layout, batched, odd sizes, and both baselines.
TEST(HostKernelVariants, GatedGemm) {
  std::vector<std::pair<v1::KernelKey, kernels::KernelSource>> sources;
  kernels::DeviceDescription without = kernels::kHostCpu;
  without.has_openblas = false;
  for (const bool a_col : {false, true}) {
    for (const bool b_col : {false, true}) {
      const v1::KernelKey key = testing::GatedBySwiglu(testing::GemmTestKey(
          5, 70, 37, 2, v1::DTYPE_F32, v1::DTYPE_F32, a_col, b_col, {"bias", "residual_add"}));
      std::string why;
      const kernels::KeySpace space = kernels::KeySpace::Of(key, kernels::kHostCpu, &why);
      ASSERT_EQ(space.templates().size(), 1u) << why;  // host_gemm_blocked has no gate
      for (const kernels::Variant& v : space.ValidVariants()) {
        sources.emplace_back(key, space.first().Source(key, kernels::OwnParameters(v)));
      }
      for (const auto& device : {kernels::kHostCpu, without}) {
        sources.emplace_back(key, *space.first().BaselineFor(key, device).source);
      }
    }
  }
  CompileAndValidate(sources);
}

// A kernel that leaves the gate out is wrong.
TEST(HostKernelVariants, IgnoringTheGateIsAWrongResult) {
  const v1::KernelKey plain =
      testing::GemmTestKey(5, 70, 37, 1, v1::DTYPE_F32, v1::DTYPE_F32, false, true, {});
  const auto result = RunCompiledFor(plain, testing::GatedBySwiglu(plain));
  EXPECT_EQ(result.outcome, BenchmarkWorker::Outcome::kWrongResult) << result.error;
}

TEST(HostKernelVariants, Softmax) {
  const v1::KernelKey small = MakeKey("softmax", {{"rows", 1}, {"cols", 3}}, {"bias"});
  const v1::KernelKey large = MakeKey("softmax", {{"rows", 70}, {"cols", 333}}, {"silu"});
  CompileAndValidate(Sources(small, large, 4));
}

TEST(HostKernelVariants, Rmsnorm) {
  const v1::KernelKey small = MakeKey("rmsnorm", {{"rows", 1}, {"cols", 3}}, {"scale"});
  const v1::KernelKey large = MakeKey("rmsnorm", {{"rows", 70}, {"cols", 333}}, {"gelu_tanh"});
  CompileAndValidate(Sources(small, large, 1));
}

TEST(HostKernelVariants, Layernorm) {
  const v1::KernelKey small = MakeKey("layernorm", {{"rows", 1}, {"cols", 3}}, {"relu"});
  const v1::KernelKey large =
      MakeKey("layernorm", {{"rows", 70}, {"cols", 333}}, {"residual_add", "bias"});
  CompileAndValidate(Sources(small, large, 2));
}

v1::KernelKey Attention(std::vector<std::pair<std::string, int64_t>> dims, v1::AttentionMask mask,
                        v1::SequenceLayout layout, const std::vector<std::string>& chain = {}) {
  v1::KernelKey key = MakeKey("attention", dims, chain);
  key.set_attention_mask(mask);
  key.set_sequence_layout(layout);
  return key;
}

// Odd lengths, grouped heads, both layouts; causal with more queries than
// keys (the first rows see no key and are zeros) and a single key.
TEST(HostKernelVariants, Attention) {
  const v1::KernelKey small =
      Attention({{"q_heads", 4}, {"kv_heads", 2}, {"q_len", 3}, {"kv_len", 7}, {"head_dim", 64}},
                v1::ATTENTION_MASK_CAUSAL, v1::SEQUENCE_LAYOUT_BHSD, {"residual_add"});
  const v1::KernelKey large =
      Attention({{"batch", 2},
                 {"q_heads", 8},
                 {"kv_heads", 2},
                 {"q_len", 33},
                 {"kv_len", 77},
                 {"head_dim", 128}},
                v1::ATTENTION_MASK_CAUSAL, v1::SEQUENCE_LAYOUT_BSHD, {"scale"});
  auto kernels = Sources(small, large, 2);
  const kernels::KernelTemplate& t = testing::HostTemplate(small);
  for (const v1::KernelKey& key :
       {Attention({{"q_heads", 2}, {"kv_heads", 1}, {"q_len", 9}, {"kv_len", 4}, {"head_dim", 256}},
                  v1::ATTENTION_MASK_CAUSAL, v1::SEQUENCE_LAYOUT_BSHD),
        Attention({{"q_heads", 3}, {"kv_heads", 3}, {"q_len", 5}, {"kv_len", 1}, {"head_dim", 64}},
                  v1::ATTENTION_MASK_NONE, v1::SEQUENCE_LAYOUT_BHSD)}) {
    for (const auto& v : t.Space(key).ValidVariants()) kernels.emplace_back(key, t.Source(key, v));
    kernels.emplace_back(key, *t.BaselineFor(key).source);
  }
  CompileAndValidate(kernels);
}

v1::KernelKey WithLse(v1::KernelKey key) {
  key.set_write_lse(true);
  return key;
}

// lse beside o, checked against float64: causal with more queries than keys
// (rows that see no key have lse -inf), both layouts, every variant of a
// small key and the baseline.
TEST(HostKernelVariants, AttentionWithLse) {
  const v1::KernelKey small = WithLse(
      Attention({{"q_heads", 4}, {"kv_heads", 2}, {"q_len", 3}, {"kv_len", 1}, {"head_dim", 64}},
                v1::ATTENTION_MASK_CAUSAL, v1::SEQUENCE_LAYOUT_BSHD, {"bias"}));
  const v1::KernelKey large = WithLse(Attention({{"batch", 2},
                                                 {"q_heads", 8},
                                                 {"kv_heads", 2},
                                                 {"q_len", 33},
                                                 {"kv_len", 77},
                                                 {"head_dim", 128}},
                                                v1::ATTENTION_MASK_NONE, v1::SEQUENCE_LAYOUT_BHSD));
  auto kernels = Sources(small, large, 2);
  kernels.emplace_back(small, *testing::HostTemplate(small).BaselineFor(small).source);
  CompileAndValidate(kernels);
}

// The additive mask the worker draws (one key in 5 hidden, so with one key
// some rows see none), with lse: every variant of a small key, a sample of
// a larger one, and the baseline.
TEST(HostKernelVariants, AttentionWithAMaskTensor) {
  const v1::KernelKey small = WithLse(
      Attention({{"q_heads", 2}, {"kv_heads", 1}, {"q_len", 3}, {"kv_len", 1}, {"head_dim", 64}},
                v1::ATTENTION_MASK_TENSOR, v1::SEQUENCE_LAYOUT_BSHD));
  const v1::KernelKey large =
      Attention({{"batch", 2},
                 {"q_heads", 4},
                 {"kv_heads", 2},
                 {"q_len", 33},
                 {"kv_len", 77},
                 {"head_dim", 64}},
                v1::ATTENTION_MASK_TENSOR, v1::SEQUENCE_LAYOUT_BHSD, {"relu"});
  auto kernels = Sources(small, large, 2);
  kernels.emplace_back(large, *testing::HostTemplate(large).BaselineFor(large).source);
  CompileAndValidate(kernels);
}

// A kernel that ignores the mask is wrong.
TEST(HostKernelVariants, IgnoringTheMaskIsAWrongResult) {
  const v1::KernelKey plain =
      Attention({{"q_heads", 2}, {"kv_heads", 1}, {"q_len", 5}, {"kv_len", 7}, {"head_dim", 64}},
                v1::ATTENTION_MASK_NONE, v1::SEQUENCE_LAYOUT_BHSD);
  v1::KernelKey masked = plain;
  masked.set_attention_mask(v1::ATTENTION_MASK_TENSOR);
  const auto result = RunCompiledFor(plain, masked);
  EXPECT_EQ(result.outcome, BenchmarkWorker::Outcome::kWrongResult) << result.error;
  EXPECT_NE(result.error.find("relative error"), std::string::npos) << result.error;
}

// A kernel that computes o right but never writes lse is wrong.
TEST(HostKernelVariants, AnUnwrittenLseIsAWrongResult) {
  const v1::KernelKey plain =
      Attention({{"q_heads", 2}, {"kv_heads", 1}, {"q_len", 5}, {"kv_len", 7}, {"head_dim", 64}},
                v1::ATTENTION_MASK_NONE, v1::SEQUENCE_LAYOUT_BHSD);
  const auto result = RunCompiledFor(plain, WithLse(plain));
  EXPECT_EQ(result.outcome, BenchmarkWorker::Outcome::kWrongResult) << result.error;
  EXPECT_EQ(result.error.find("lse: "), 0u) << result.error;
  EXPECT_EQ(result.response.unwritten_elements(), 2 * 5);
}

v1::KernelKey WithPrologue(v1::KernelKey key, const std::vector<std::string>& ops) {
  for (const auto& name : ops) {
    auto* op = key.add_prologue();
    op->set_op(name);
    if (name == "scale") op->set_scalar(0.125);
  }
  return key;
}

TEST(HostKernelVariants, SoftmaxWithScaleAndMaskPrologue) {
  const v1::KernelKey small =
      WithPrologue(MakeKey("softmax", {{"rows", 1}, {"cols", 3}}), {"scale", "residual_add"});
  const v1::KernelKey large = WithPrologue(
      MakeKey("softmax", {{"rows", 70}, {"cols", 333}}, {"relu"}), {"scale", "residual_add"});
  CompileAndValidate(Sources(small, large, 4));
}

TEST(HostKernelVariants, ResidualAddRmsnormAndLayernorm) {
  const v1::KernelKey small =
      WithPrologue(MakeKey("rmsnorm", {{"rows", 1}, {"cols", 3}}), {"residual_add"});
  const v1::KernelKey large = WithPrologue(
      MakeKey("rmsnorm", {{"rows", 70}, {"cols", 333}}, {"scale"}), {"residual_add", "bias"});
  CompileAndValidate(Sources(small, large, 1));
  const v1::KernelKey small_layernorm =
      WithPrologue(MakeKey("layernorm", {{"rows", 1}, {"cols", 3}}), {"residual_add"});
  const v1::KernelKey large_layernorm = WithPrologue(
      MakeKey("layernorm", {{"rows", 33}, {"cols", 257}}, {"gelu_tanh"}), {"residual_add"});
  CompileAndValidate(Sources(small_layernorm, large_layernorm, 2));
}

// The residual stream: x + residual is written next to the norm (and, for
// the same code path, next to softmax), and the worker checks both outputs.
TEST(HostKernelVariants, RowOpsWriteTheirPrologueOutput) {
  for (const auto& [op, space] : {std::pair{"rmsnorm", 1}, {"layernorm", 2}, {"softmax", 4}}) {
    v1::KernelKey small = WithPrologue(MakeKey(op, {{"rows", 1}, {"cols", 3}}), {"residual_add"});
    v1::KernelKey large = WithPrologue(MakeKey(op, {{"rows", 70}, {"cols", 333}}, {"scale"}),
                                       {"scale", "residual_add"});
    small.set_write_prologue_output(true);
    large.set_write_prologue_output(true);
    CompileAndValidate(Sources(small, large, static_cast<size_t>(space)));
  }
}

// A kernel that computes the norm right but never writes the sum is wrong.
TEST(HostKernelVariants, AnUnwrittenPrologueOutputIsAWrongResult) {
  const v1::KernelKey plain =
      WithPrologue(MakeKey("rmsnorm", {{"rows", 4}, {"cols", 33}}), {"residual_add"});
  v1::KernelKey wanted = plain;
  wanted.set_write_prologue_output(true);
  const auto result = RunCompiledFor(plain, wanted);
  EXPECT_EQ(result.outcome, BenchmarkWorker::Outcome::kWrongResult) << result.error;
  EXPECT_NE(result.error.find("prologue output"), std::string::npos) << result.error;
  EXPECT_EQ(result.response.unwritten_elements(), 4 * 33);
}

TEST(HostKernelVariants, Elementwise) {
  const v1::KernelKey small = MakeKey("elementwise", {{"rows", 1}, {"cols", 3}}, {"bias", "silu"});
  const v1::KernelKey large = WithCastToF32(
      MakeKey("elementwise", {{"rows", 70}, {"cols", 333}}, {"scale", "residual_add", "gelu_erf"}));
  CompileAndValidate(Sources(small, large, 1));
}

}  // namespace
}  // namespace tiletune::tuner
