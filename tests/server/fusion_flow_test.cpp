// Op graphs end to end through the real daemon, worker and CLI on the host
// backend: the CLI submits graphs, the daemon plans and tunes their kernels,
// and Lookup answers with the plan and one record per kernel.
#include <gtest/gtest.h>

#include <fstream>

#include "kernels/core/kernel_key.h"
#include "tests/support/daemon_calls.h"
#include "tests/support/tiletuned_process.h"

namespace tiletune::testing {
namespace {

// add(x, residual) -> rmsnorm(w) -> scale: one kernel, the add as prologue.
constexpr const char* kResidualNormGraph = R"(
shape: {t: 37, d: 300}
tensors:
  x: {dims: [t, d], dtype: f32}
  residual: {dims: [t, d], dtype: f32}
  w: {dims: [d], dtype: f32}
ops:
  - {op: add, inputs: [x, residual], output: h}
  - {op: rmsnorm, inputs: [h, w], output: n}
  - {op: scale, inputs: [n], output: y, scalar: 0.5}
)";

// matmul -> scale -> softmax: the softmax cannot join the GEMM's kernel.
constexpr const char* kAttentionScoresGraph = R"(
shape: {m: 24, n: 40, k: 16}
tensors:
  q: {dims: [m, k], dtype: f32}
  kt: {dims: [k, n], dtype: f32}
ops:
  - {op: matmul, inputs: [q, kt], output: s}
  - {op: scale, inputs: [s], output: a, scalar: 0.25}
  - {op: softmax, inputs: [a], output: p}
)";

std::string Indented(const std::string& text) {
  std::string out;
  bool first = true;
  for (char c : text) {
    if (c == '\n') {
      out += first ? "" : "\n";
      first = false;
      continue;
    }
    if (out.empty() || out.back() == '\n') out += "    ";
    out += c;
  }
  return out;
}

std::string WriteFile(const std::filesystem::path& path, const std::string& text) {
  std::ofstream(path) << text;
  return path.string();
}

v1::LookupResponse Lookup(v1::TuningService::Stub& stub, const v1::KernelKey& key) {
  v1::LookupRequest request;
  *request.mutable_key() = key;
  return testing::Lookup(stub, request);
}

TEST(FusionFlow, CliTunesOpGraphsAndLookupAnswersPerKernelOfThePlan) {
  TempDir dir;
  TiletunedProcess daemon(dir.path());
  daemon.Start();
  const std::string tiletune = BinaryPath("tiletune");
  const std::string norm = WriteFile(dir.path() / "norm.yaml", kResidualNormGraph);
  const std::string scores = WriteFile(dir.path() / "scores.yaml", kAttentionScoresGraph);

  // Before tuning: a MISS that already shows the plan and why it splits.
  auto before =
      RunCommand({tiletune, "--server", daemon.address(), "lookup", "--key-file", scores});
  EXPECT_EQ(before.exit_code, 0) << before.err;
  EXPECT_NE(before.out.find("MISS graph matmul->scale->softmax"), std::string::npos) << before.out;
  EXPECT_NE(before.out.find("fusion plan"), std::string::npos) << before.out;
  EXPECT_NE(before.out.find("kernel 1/2 (graph ops 0,1): MISS gemm"), std::string::npos)
      << before.out;
  EXPECT_NE(before.out.find("kernel 2/2 (graph ops 2): MISS softmax"), std::string::npos)
      << before.out;
  EXPECT_NE(before.out.find("split: softmax reduces whole rows of 40 columns"), std::string::npos)
      << before.out;

  const std::string job = WriteFile(
      dir.path() / "job.yaml",
      "strategy: random\nseed: 3\nbudget: {max_variants: 3}\nkernels:\n  -\n" +
          Indented(kResidualNormGraph) + "\n  -\n" + Indented(kAttentionScoresGraph) + "\n");
  auto submitted =
      RunCommand({tiletune, "--server", daemon.address(), "--json", "submit", job, "--watch"},
                 std::chrono::seconds(300));
  ASSERT_EQ(submitted.exit_code, 0) << submitted.out << submitted.err << daemon.log();
  // Three kernels: the fused residual norm, the GEMM with its scale, the softmax.
  EXPECT_NE(submitted.out.find("\"index\":2"), std::string::npos) << submitted.out;
  EXPECT_EQ(submitted.out.find("\"index\":3"), std::string::npos) << submitted.out;
  EXPECT_NE(submitted.out.find("\"prologue\":[{\"op\":\"residual_add\""), std::string::npos)
      << submitted.out;

  auto after =
      RunCommand({tiletune, "--server", daemon.address(), "--json", "lookup", "--key-file", norm});
  ASSERT_EQ(after.exit_code, 0) << after.err;
  EXPECT_NE(after.out.find("\"kernel_results\":[{"), std::string::npos) << after.out;
  EXPECT_NE(after.out.find("\"winner\""), std::string::npos) << after.out;

  // Every kernel of both plans now has a record measured by this job; the
  // GEMM kernel is the same record an op + chain key finds.
  auto stub = daemon.Stub();
  v1::KernelKey gemm_key;
  gemm_key.set_op("gemm");
  gemm_key.set_input_dtype(v1::DTYPE_F32);
  gemm_key.add_chain()->set_op("scale");
  for (auto [name, size] : {std::pair{"m", 24}, {"n", 40}, {"k", 16}}) {
    auto* d = gemm_key.add_shape();
    d->set_name(name);
    d->set_size(size);
  }
  const auto old_form = Lookup(*stub, gemm_key);
  ASSERT_TRUE(old_form.has_record()) << old_form.ShortDebugString();
  EXPECT_EQ(old_form.record().key().op(), "gemm");
}

TEST(FusionFlow, AnInvalidGraphIsRejectedNamingTheField) {
  TempDir dir;
  TiletunedProcess daemon(dir.path());
  daemon.Start();
  std::string graph = kResidualNormGraph;
  graph.replace(graph.find("inputs: [h, w]"), 14, "inputs: [h, x]");  // x is [t, d], not [d]
  const std::string path = WriteFile(dir.path() / "bad.yaml", graph);
  auto r = RunCommand(
      {BinaryPath("tiletune"), "--server", daemon.address(), "lookup", "--key-file", path});
  EXPECT_EQ(r.exit_code, 2) << r.out << r.err;
  EXPECT_NE(r.err.find("key.ops[1].inputs[1]"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("rmsnorm weights must be [300]"), std::string::npos) << r.err;
}

}  // namespace
}  // namespace tiletune::testing
