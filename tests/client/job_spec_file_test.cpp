#include "client/job_spec_file.h"

#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <string>

#include <gtest/gtest.h>

#include "client/input_error.h"

namespace tiletune::client {
namespace {

namespace fs = std::filesystem;

// Writes spec files into a fresh directory removed at the end.
class JobSpecFileTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() /
           ("tiletune_spec_" + std::to_string(getpid()) + "_" +
            ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::create_directories(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }

  fs::path Write(const std::string& name, const std::string& text) {
    fs::path path = dir_ / name;
    std::ofstream(path) << text;
    return path;
  }

  // The InputError message for reading `text` as a file.
  std::string ErrorFor(const std::string& text) {
    fs::path path = Write("bad.yaml", text);
    try {
      ReadJobSpecFile(path);
    } catch (const InputError& e) {
      std::string message = e.what();
      EXPECT_EQ(message.rfind(path.string() + ": ", 0), 0u) << message;
      return message.substr(path.string().size() + 2);
    }
    ADD_FAILURE() << "no error for:\n" << text;
    return "";
  }

  fs::path dir_;
};

constexpr const char* kGoodYaml = R"(name: example
strategy: random
priority: 3
device: cpu:0
seed: 7
budget: {max_variants: 12, max_seconds: 60}
kernels:
  - op: gemm
    dtype: f32
    output_dtype: bf16
    layouts: {a: row, b: col}
    shape: {m: 128, n: 256, k: 64}
    chain: [bias, gelu_tanh, {op: scale, scalar: 0.5}, residual_add, {op: cast, dtype: bf16}]
  - op: softmax
    input_dtype: f16
    accumulate_dtype: f32
    shape: {rows: 32, cols: 1024}
    chain: ["scale=0.25", "cast=f32"]
)";

TEST_F(JobSpecFileTest, ReadsEveryFieldOfAYamlSpec) {
  v1::JobSpec spec = ReadJobSpecFile(Write("job.yaml", kGoodYaml));
  EXPECT_EQ(spec.name(), "example");
  EXPECT_EQ(spec.strategy(), v1::STRATEGY_RANDOM);
  EXPECT_EQ(spec.priority(), 3);
  EXPECT_EQ(spec.device().device(), "cpu:0");
  EXPECT_EQ(spec.seed(), 7u);
  EXPECT_EQ(spec.budget().max_variants(), 12);
  EXPECT_DOUBLE_EQ(spec.budget().max_seconds(), 60);
  ASSERT_EQ(spec.kernels_size(), 2);

  const auto& gemm = spec.kernels(0);
  EXPECT_EQ(gemm.op(), "gemm");
  EXPECT_EQ(gemm.input_dtype(), v1::DTYPE_F32);
  EXPECT_EQ(gemm.output_dtype(), v1::DTYPE_BF16);
  EXPECT_EQ(gemm.accumulate_dtype(), v1::DTYPE_UNSPECIFIED);
  ASSERT_EQ(gemm.layouts_size(), 2);
  EXPECT_EQ(gemm.layouts(0).tensor(), "a");
  EXPECT_EQ(gemm.layouts(0).layout(), v1::LAYOUT_ROW_MAJOR);
  EXPECT_EQ(gemm.layouts(1).tensor(), "b");
  EXPECT_EQ(gemm.layouts(1).layout(), v1::LAYOUT_COL_MAJOR);
  ASSERT_EQ(gemm.shape_size(), 3);  // in file order
  EXPECT_EQ(gemm.shape(0).name(), "m");
  EXPECT_EQ(gemm.shape(0).size(), 128);
  EXPECT_EQ(gemm.shape(1).name(), "n");
  EXPECT_EQ(gemm.shape(2).name(), "k");
  EXPECT_EQ(gemm.shape(2).size(), 64);
  ASSERT_EQ(gemm.chain_size(), 5);
  EXPECT_EQ(gemm.chain(0).op(), "bias");
  EXPECT_EQ(gemm.chain(1).op(), "gelu_tanh");
  EXPECT_EQ(gemm.chain(2).op(), "scale");
  EXPECT_DOUBLE_EQ(gemm.chain(2).scalar(), 0.5);
  EXPECT_EQ(gemm.chain(3).op(), "residual_add");
  EXPECT_EQ(gemm.chain(4).op(), "cast");
  EXPECT_EQ(gemm.chain(4).dtype(), v1::DTYPE_BF16);

  const auto& softmax = spec.kernels(1);
  EXPECT_EQ(softmax.input_dtype(), v1::DTYPE_F16);
  EXPECT_EQ(softmax.accumulate_dtype(), v1::DTYPE_F32);
  ASSERT_EQ(softmax.chain_size(), 2);
  EXPECT_DOUBLE_EQ(softmax.chain(0).scalar(), 0.25);
  EXPECT_EQ(softmax.chain(1).dtype(), v1::DTYPE_F32);
}

TEST_F(JobSpecFileTest, JsonGivesTheSameSpecAsYaml) {
  constexpr const char* kJson = R"({
  "name": "example", "strategy": "random", "priority": 3, "device": "cpu:0", "seed": 7,
  "budget": {"max_variants": 12, "max_seconds": 60},
  "kernels": [
    {"op": "gemm", "dtype": "f32", "output_dtype": "bf16", "layouts": {"a": "row", "b": "col"},
     "shape": {"m": 128, "n": 256, "k": 64},
     "chain": ["bias", "gelu_tanh", {"op": "scale", "scalar": 0.5}, "residual_add",
               {"op": "cast", "dtype": "bf16"}]},
    {"op": "softmax", "input_dtype": "f16", "accumulate_dtype": "f32",
     "shape": {"rows": 32, "cols": 1024}, "chain": ["scale=0.25", "cast=f32"]}
  ]
})";
  v1::JobSpec from_yaml = ReadJobSpecFile(Write("job.yaml", kGoodYaml));
  v1::JobSpec from_json = ReadJobSpecFile(Write("job.json", kJson));
  EXPECT_EQ(from_json.SerializeAsString(), from_yaml.SerializeAsString())
      << from_json.DebugString();
}

TEST_F(JobSpecFileTest, ReadsTheExampleFile) {
  v1::JobSpec spec =
      ReadJobSpecFile(fs::path(TILETUNE_SOURCE_DIR) / "tests/client/data/example_job.yaml");
  EXPECT_EQ(spec.name(), "example");
  EXPECT_EQ(spec.seed(), 7u);
  ASSERT_EQ(spec.kernels_size(), 1);
  const auto& gemm = spec.kernels(0);
  EXPECT_EQ(gemm.input_dtype(), v1::DTYPE_F32);
  EXPECT_EQ(gemm.shape_size(), 3);
  ASSERT_EQ(gemm.chain_size(), 5);
  EXPECT_EQ(gemm.chain(4).dtype(), v1::DTYPE_BF16);
}

TEST_F(JobSpecFileTest, AMinimalSpecLeavesTheRestToTheDaemon) {
  v1::JobSpec spec = ReadJobSpecFile(Write("min.yaml", "kernels: [{op: gemm}]\n"));
  EXPECT_EQ(spec.strategy(), v1::STRATEGY_UNSPECIFIED);
  EXPECT_FALSE(spec.has_budget());
  ASSERT_EQ(spec.kernels_size(), 1);
  EXPECT_EQ(spec.kernels(0).op(), "gemm");
}

TEST_F(JobSpecFileTest, AllowTf32IsABoolean) {
  v1::JobSpec spec = ReadJobSpecFile(
      Write("tf32.yaml", "kernels: [{op: gemm, dtype: f32, allow_tf32: true}, {op: gemm}]\n"));
  ASSERT_EQ(spec.kernels_size(), 2);
  EXPECT_TRUE(spec.kernels(0).allow_tf32());
  EXPECT_FALSE(spec.kernels(1).allow_tf32());
  EXPECT_EQ(ErrorFor("kernels:\n  - op: gemm\n    allow_tf32: yes please\n"),
            "kernels[0].allow_tf32: expected true or false (line 3)");
}

TEST_F(JobSpecFileTest, AttentionKeysSayTheirMaskLayoutAndLse) {
  const v1::JobSpec spec = ReadJobSpecFile(Write("attention.yaml", R"(kernels:
  - op: attention
    dtype: bf16
    shape: {batch: 4, q_heads: 32, kv_heads: 8, q_len: 4096, kv_len: 4096, head_dim: 128}
    attention_mask: causal
    sequence_layout: bhsd
    write_lse: true
  - {op: attention, attention_mask: none}
)"));
  ASSERT_EQ(spec.kernels_size(), 2);
  EXPECT_EQ(spec.kernels(0).attention_mask(), v1::ATTENTION_MASK_CAUSAL);
  EXPECT_EQ(spec.kernels(0).sequence_layout(), v1::SEQUENCE_LAYOUT_BHSD);
  EXPECT_TRUE(spec.kernels(0).write_lse());
  EXPECT_EQ(spec.kernels(1).attention_mask(), v1::ATTENTION_MASK_NONE);
  EXPECT_EQ(ErrorFor("kernels:\n  - op: attention\n    attention_mask: upper\n"),
            "kernels[0].attention_mask: unknown attention mask 'upper' (known: none, causal, "
            "tensor) (line 3)");
  EXPECT_EQ(ErrorFor("kernels:\n  - op: attention\n    sequence_layout: sbhd\n"),
            "kernels[0].sequence_layout: unknown sequence layout 'sbhd' (known: bshd, bhsd) "
            "(line 3)");
}

TEST_F(JobSpecFileTest, AGemmKeySaysItsGate) {
  const v1::JobSpec spec = ReadJobSpecFile(Write("gate.yaml", R"(kernels:
  - op: gemm
    dtype: bf16
    shape: {m: 16, n: 14336, k: 4096}
    layouts: {b: col}
    gate: swiglu
)"));
  ASSERT_EQ(spec.kernels_size(), 1);
  EXPECT_EQ(spec.kernels(0).gate(), v1::GATE_SWIGLU);
  EXPECT_EQ(ErrorFor("kernels:\n  - op: gemm\n    gate: geglu\n"),
            "kernels[0].gate: unknown gate 'geglu' (known: none, swiglu) (line 3)");
}

TEST_F(JobSpecFileTest, OpGraphKernelsAndPrologues) {
  const v1::JobSpec spec = ReadJobSpecFile(Write("graph.yaml", R"(kernels:
  - shape: {t: 8, d: 16}
    tensors:
      x: {dims: [t, d], dtype: bf16}
      w: {dims: [d], dtype: bf16}
    ops:
      - {op: rmsnorm, inputs: [x, w], output: n}
      - {op: cast, inputs: [n], output: y, dtype: f16}
    outputs: [y]
  - {op: softmax, dtype: f32, shape: {rows: 2, cols: 3}, prologue: [scale=0.5, residual_add]}
  - {op: rmsnorm, shape: {rows: 2, cols: 8}, prologue: [residual_add], write_prologue_output: true}
)"));
  ASSERT_EQ(spec.kernels_size(), 3);
  EXPECT_TRUE(spec.kernels(2).write_prologue_output());
  EXPECT_FALSE(spec.kernels(1).write_prologue_output());
  const v1::KernelKey& graph = spec.kernels(0);
  EXPECT_TRUE(graph.op().empty());
  ASSERT_EQ(graph.tensors_size(), 2);
  EXPECT_EQ(graph.tensors(1).name(), "w");
  EXPECT_EQ(graph.tensors(1).dims(0), "d");
  EXPECT_EQ(graph.tensors(1).dtype(), v1::DTYPE_BF16);
  ASSERT_EQ(graph.ops_size(), 2);
  EXPECT_EQ(graph.ops(0).inputs(1), "w");
  EXPECT_EQ(graph.ops(1).dtype(), v1::DTYPE_F16);
  EXPECT_EQ(graph.outputs(0), "y");
  ASSERT_EQ(spec.kernels(1).prologue_size(), 2);
  EXPECT_DOUBLE_EQ(spec.kernels(1).prologue(0).scalar(), 0.5);

  EXPECT_EQ(ErrorFor("kernels:\n  - tensors: {x: {dims: [t]}}\n    ops: []\n"),
            "kernels[0].tensors.x.dtype: is required (line 2)");
  EXPECT_EQ(ErrorFor("kernels:\n  - ops: [{op: relu, input: [x]}]\n"),
            "kernels[0].ops[0].input: unknown key (known: op, inputs, output, scalar, dtype) "
            "(line 2)");
}

TEST_F(JobSpecFileTest, UnknownKeyIsNamedWithItsLine) {
  EXPECT_EQ(ErrorFor("kernels:\n  - op: gemm\n    shpe: {m: 1}\n"),
            "kernels[0].shpe: unknown key (known: op, dtype, input_dtype, output_dtype, "
            "accumulate_dtype, allow_tf32, layouts, shape, chain, prologue, write_prologue_output, "
            "attention_mask, sequence_layout, write_lse, gate, ops, tensors, outputs) (line 3)");
  EXPECT_EQ(ErrorFor("kernels: [{op: gemm}]\nbudget: {max_variant: 3}\n"),
            "budget.max_variant: unknown key (known: max_variants, max_seconds) (line 2)");
}

TEST_F(JobSpecFileTest, NonIntegerDimIsNamedWithItsLine) {
  std::string spec = "name: x\nkernels:\n  - op: gemm\n    shape:\n      m: 12x\n";
  EXPECT_EQ(ErrorFor(spec), "kernels[0].shape.m: expected an integer, got '12x' (line 5)");
  EXPECT_EQ(ErrorFor("kernels: [{op: gemm, shape: {m: 1.5}}]"),
            "kernels[0].shape.m: expected an integer, got '1.5' (line 1)");
  // In JSON a quoted number is a string.
  EXPECT_EQ(ErrorFor(R"({"kernels": [{"op": "gemm", "shape": {"m": "128"}}]})"),
            "kernels[0].shape.m: expected an integer, got '128' (line 1)");
}

TEST_F(JobSpecFileTest, UnknownDtypeAndLayoutListTheKnownOnes) {
  EXPECT_EQ(ErrorFor("kernels:\n- op: gemm\n  dtype: f33\n"),
            "kernels[0].dtype: unknown dtype 'f33' (known: f32, f16, bf16, f64) (line 3)");
  EXPECT_EQ(ErrorFor("kernels:\n- op: gemm\n  layouts: {a: diagonal}\n"),
            "kernels[0].layouts.a: unknown layout 'diagonal' (known: row, col) (line 3)");
  EXPECT_EQ(ErrorFor("strategy: greedy\nkernels: [{op: gemm}]\n"),
            "strategy: unknown strategy 'greedy' (known: exhaustive, random, annealing) (line 1)");
}

TEST_F(JobSpecFileTest, MissingOrEmptyKernelsIsAnError) {
  EXPECT_EQ(ErrorFor("name: nothing\n"),
            "kernels: is required (a list of at least one kernel) (line 1)");
  EXPECT_EQ(ErrorFor("kernels: []\n"), "kernels: expected a list of at least one kernel (line 1)");
  EXPECT_EQ(ErrorFor(""), "the file is empty");
}

TEST_F(JobSpecFileTest, BadChainEntriesAreNamed) {
  EXPECT_EQ(ErrorFor("kernels:\n- op: gemm\n  chain: [bias, scale=fast]\n"),
            "kernels[0].chain[1]: 'scale=fast': 'fast' is neither a number nor a dtype "
            "(f32, f16, bf16, f64) (line 3)");
  EXPECT_EQ(ErrorFor("kernels:\n- op: gemm\n  chain:\n  - {op: scale, scalr: 2}\n"),
            "kernels[0].chain[0].scalr: unknown key (known: op, scalar, dtype) (line 4)");
  EXPECT_EQ(ErrorFor("kernels:\n- op: gemm\n  chain:\n  - {scalar: 2}\n"),
            "kernels[0].chain[0].op: is required (line 4)");
  EXPECT_EQ(ErrorFor("kernels:\n- op: gemm\n  chain: [[bias]]\n"),
            "kernels[0].chain[0]: expected an op name or {op: ..., scalar: ..., dtype: ...} "
            "(line 3)");
  EXPECT_EQ(ErrorFor("kernels:\n- op: gemm\n  chain: bias\n"),
            "kernels[0].chain: expected a list of ops (line 3)");
}

TEST_F(JobSpecFileTest, RepeatedAndConflictingKeysAreErrors) {
  EXPECT_EQ(ErrorFor("kernels:\n- op: gemm\n  shape: {m: 1, m: 2}\n"),
            "kernels[0].shape.m: is given twice (line 3)");
  EXPECT_EQ(ErrorFor("kernels:\n- op: gemm\n  dtype: f32\n  input_dtype: f16\n"),
            "kernels[0].input_dtype: give dtype or input_dtype, not both (dtype is its "
            "shorthand) (line 4)");
}

TEST_F(JobSpecFileTest, YamlSyntaxErrorGivesTheLine) {
  std::string message = ErrorFor("name: x\nkernels:\n  - op: gemm\n    shape: {m: 1\n");
  EXPECT_EQ(message.rfind("YAML syntax error: ", 0), 0u) << message;
  EXPECT_NE(message.find("(line "), std::string::npos) << message;
}

TEST_F(JobSpecFileTest, OutOfRangeNumbersAreErrors) {
  EXPECT_EQ(ErrorFor("priority: 99999999999\nkernels: [{op: gemm}]\n"),
            "priority: 99999999999 is out of range [-2147483648, 2147483647] (line 1)");
  EXPECT_EQ(ErrorFor("seed: -1\nkernels: [{op: gemm}]\n"),
            "seed: -1 is out of range [0, 9223372036854775807] (line 1)");
}

TEST_F(JobSpecFileTest, UnreadableFileNamesThePath) {
  fs::path missing = dir_ / "missing.yaml";
  try {
    ReadJobSpecFile(missing);
    FAIL() << "no error";
  } catch (const InputError& e) {
    EXPECT_EQ(std::string(e.what()), missing.string() + ": cannot read: No such file or directory");
  }
}

}  // namespace
}  // namespace tiletune::client
