// The cuBLASLt baseline end to end: the real tiletune-worker calls cuBLASLt
// (with its own epilogue, or followed by the compiled epilogue pass) with
// the algorithm asked for and validates the result against the float64
// reference like any variant; the baseline step tries the heuristic's
// algorithms and keeps the fastest correct one, and the decision re-times
// that one. Skips without a CUDA driver, device or cuBLASLt.
#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <cmath>
#include <filesystem>
#include <map>

#include "kernels/core/kernel_key.h"
#include "kernels/ops/gemm/cublaslt_baseline.h"
#include "runtime/baseline_candidate.h"
#include "runtime/cuda/cuda_backend.h"
#include "tiletune/worker/v1/worker.pb.h"
#include "tuner/baseline_step.h"
#include "tuner/benchmark_worker.h"
#include "tuner/device_description_of.h"
#include "tuner/tuning_run.h"

namespace tiletune::tuner {
namespace {

using namespace std::chrono_literals;

// The tolerances of the daemon's defaults (tuning_session.h).
constexpr double kTolHalf = 2e-2, kTolTf32 = 2e-3, kTolF32 = 1e-4;
// The worker computes the float64 reference on one core: minutes for the
// largest problem here on a slow host.
constexpr auto kRunLimit = 300s;

struct Case {
  const char* what;
  int64_t m, n, k, batch;
  v1::DType in, out;
  bool a_col, b_col;
  std::vector<std::pair<const char*, v1::DType>> chain;
  bool tf32 = false;
  v1::Gate gate = v1::GATE_NONE;
};

v1::KernelKey KeyOf(const Case& c) {
  v1::KernelKey key;
  key.set_op("gemm");
  key.set_input_dtype(c.in);
  key.set_output_dtype(c.out);
  key.set_allow_tf32(c.tf32);
  key.set_gate(c.gate);
  for (const auto& [name, size] :
       {std::pair<const char*, int64_t>{"m", c.m}, {"n", c.n}, {"k", c.k}, {"batch", c.batch}}) {
    auto* d = key.add_shape();
    d->set_name(name);
    d->set_size(size);
  }
  for (const auto& [tensor, col] : {std::pair<const char*, bool>{"a", c.a_col}, {"b", c.b_col}}) {
    auto* l = key.add_layouts();
    l->set_tensor(tensor);
    l->set_layout(col ? v1::LAYOUT_COL_MAJOR : v1::LAYOUT_ROW_MAJOR);
  }
  for (const auto& [op, dtype] : c.chain) {
    auto* entry = key.add_chain();
    entry->set_op(op);
    entry->set_dtype(dtype);
  }
  return kernels::NormalizeKernelKey(key);
}

// Records nothing: the tests read what the steps return.
class Unobserved final : public TuningObserver {
 public:
  void OnTrial(const v1::Trial&) override {}
  void OnRunFailure(const v1::Trial&) override {}
  void OnKernel(const std::string&, const kernels::KernelSource&) override {}
  void OnProgress(const v1::JobItemProgress&, v1::JobEvent::Kind, const v1::Trial*) override {}
};

class VendorBaseline : public ::testing::Test {
 protected:
  void SetUp() override {
    std::string why;
    backend_ = runtime::cuda::CudaBackend::Open(
        {std::filesystem::path(TILETUNE_BUILD_DIR) / "test-cache" / "cuda-kernels",
         int64_t{256} << 20, std::string(TILETUNE_BUILD_DIR) + "/bin/tiletune-rtc"},
        &why);
    if (!backend_) GTEST_SKIP() << "no CUDA backend: " << why;
    if (auto missing = backend_->VendorLibraryMissing(kernels::gemm::kCublasLtName)) {
      GTEST_SKIP() << *missing;
    }
  }

  // The request for the key's cuda baseline: cuBLASLt alone, or followed by
  // the compiled epilogue pass.
  worker::v1::BenchRequest Request(const Case& c, bool with_pass) {
    const v1::KernelKey key = KeyOf(c);
    const kernels::Baseline baseline = kernels::gemm::CublasLtBaseline(key);
    EXPECT_EQ(baseline.vendor_library, kernels::gemm::kCublasLtName) << c.what;
    worker::v1::BenchRequest request;
    request.set_backend("cuda");
    request.set_vendor_baseline(baseline.vendor_library);
    if (with_pass) {
      EXPECT_TRUE(baseline.source) << c.what << ": no epilogue pass";
      if (!baseline.source) return request;
      const auto compiled = backend_->Compile(*baseline.source, backend_->Devices()[0], {});
      EXPECT_TRUE(compiled.ok) << c.what << ": the epilogue pass did not compile:\n"
                               << compiled.log;
      request.set_artifact_path(compiled.artifact_path);
      request.set_entry(baseline.source->entry);
      *request.mutable_launch() = baseline.source->launch;
    }
    *request.mutable_key() = key;
    request.set_seed(99);
    request.mutable_protocol()->set_warmup(1);
    request.mutable_protocol()->set_min_repetitions(3);
    request.mutable_protocol()->set_max_repetitions(10);
    request.set_tolerance(c.in != v1::DTYPE_F32 ? kTolHalf : c.tf32 ? kTolTf32 : kTolF32);
    return request;
  }

  // Runs `request` through the worker, expecting a correct, timed run.
  worker::v1::BenchResponse Run(const worker::v1::BenchRequest& request, const char* what) {
    const BenchmarkWorker::Result r = worker_.Run(request, kRunLimit);
    EXPECT_EQ(r.outcome, BenchmarkWorker::Outcome::kOk)
        << what << ": " << OutcomeName(r.outcome) << ": " << r.error;
    EXPECT_EQ(r.response.unwritten_elements(), 0) << what;
    EXPECT_GT(r.response.timing().median_us(), 0) << what;
    EXPECT_TRUE(r.response.has_vendor_algorithm()) << what;
    EXPECT_EQ(r.response.vendor_algorithm().epilogue_pass(), !request.entry().empty()) << what;
    return r.response;
  }

  // Runs the key's cuda baseline through the worker; its relative error.
  double RunBaseline(const Case& c, bool with_pass) {
    if (!with_pass) {
      EXPECT_TRUE(kernels::gemm::CublasLtBaseline(KeyOf(c)).vendor_call_suffices) << c.what;
    }
    return Run(Request(c, with_pass), c.what).rel_error();
  }

  // A tuning run of `key` on the GPU, as the daemon's scheduler wires it.
  struct Session {
    Session(runtime::Backend& backend, const v1::KernelKey& key, const TuningLimits& tuning)
        : device(backend.Devices().front()),
          space(kernels::KeySpace::Of(key, DeviceDescriptionOf(device), &why)),
          worker({std::string(TILETUNE_BUILD_DIR) + "/bin/tiletune-worker", device.worker_env}),
          limits(tuning),
          parts{space, backend, device, worker, pool, limits} {
      item.key = key;
      item.spec.set_seed(7);
      item.spec.mutable_budget()->set_max_variants(2);
    }
    runtime::DeviceInfo device;
    std::string why;
    kernels::KeySpace space;
    BenchmarkWorker worker;
    CompilePool pool{2};
    TuningLimits limits;
    SessionParts parts;
    TuningItem item{.job_id = "vendor-baseline-test"};
    Unobserved observer;
    std::atomic<bool> cancel{false};
  };

  std::unique_ptr<runtime::cuda::CudaBackend> backend_;
  BenchmarkWorker worker_{{std::string(TILETUNE_BUILD_DIR) + "/bin/tiletune-worker", {}}};
};

constexpr auto B = v1::DTYPE_BF16, H = v1::DTYPE_F16, F = v1::DTYPE_F32;
constexpr auto kOut = v1::DTYPE_UNSPECIFIED;  // chain tensors in the output dtype

const Case kBiasGelu{"bias+gelu_tanh 256x512x128 bf16, b col", 256, 512, 128, 1, B, B, false, true,
                     {{"bias", kOut}, {"gelu_tanh", kOut}}};

TEST_F(VendorBaseline, Bf16RowMajorSquare) {
  const double err = RunBaseline(
      {"bf16 4096x4096x1024 row/row", 4096, 4096, 1024, 1, B, B, false, false, {}}, false);
  EXPECT_LT(err, 1e-2);
}

TEST_F(VendorBaseline, OddShapesAndLayouts) {
  const Case cases[] = {
      {"77x129x65 bf16 a row, b col", 77, 129, 65, 1, B, B, false, true, {}},
      {"77x129x65 f16 -> f32 a col, b row", 77, 129, 65, 1, H, F, true, false, {}},
      {"77x129x65 bf16 a col, b col", 77, 129, 65, 1, B, B, true, true, {}},
  };
  for (const Case& c : cases) EXPECT_LT(RunBaseline(c, false), 1e-2) << c.what;
}

TEST_F(VendorBaseline, Batched) {
  EXPECT_LT(RunBaseline({"batch 3 of 96x80x40 bf16, b col",
                         96,
                         80,
                         40,
                         3,
                         B,
                         B,
                         false,
                         true,
                         {{"bias", kOut}, {"relu", kOut}}},
                        false),
            1e-2);
}

TEST_F(VendorBaseline, BiasGeluTanhInCublasLtsEpilogueAndFollowedByThePass) {
  EXPECT_LT(RunBaseline(kBiasGelu, false), 1e-2);
  EXPECT_LT(RunBaseline(kBiasGelu, true), 1e-2);
}

TEST_F(VendorBaseline, ScaleAndResidualFoldIntoAlphaAndBetaOrTheirPass) {
  const Case c{"scale+residual+bias 77x129x65 bf16, batch 2",
               77,
               129,
               65,
               2,
               B,
               B,
               false,
               true,
               {{"scale", kOut}, {"residual_add", kOut}, {"bias", kOut}}};
  EXPECT_LT(RunBaseline(c, false), 1e-2);
  EXPECT_LT(RunBaseline(c, true), 1e-2);
}

TEST_F(VendorBaseline, BiasGeluErfResidualRunsTheEpiloguePass) {
  const Case c{"bias+gelu_erf+residual 77x129x65 bf16, batch 2",
               77,
               129,
               65,
               2,
               B,
               B,
               false,
               true,
               {{"bias", kOut}, {"gelu_erf", kOut}, {"residual_add", kOut}}};
  EXPECT_EQ(kernels::gemm::CublasLtBaseline(KeyOf(c)).name, "cublasLt+gemm_epilogue_pass");
  EXPECT_FALSE(kernels::gemm::CublasLtBaseline(KeyOf(c)).vendor_call_suffices);
  EXPECT_LT(RunBaseline(c, true), 1e-2);
  // Without the pass the worker refuses to run it.
  const BenchmarkWorker::Result r = worker_.Run(Request(c, false), kRunLimit);
  EXPECT_EQ(r.outcome, BenchmarkWorker::Outcome::kLoadError);
  EXPECT_NE(r.error.find("no epilogue pass came with the call"), std::string::npos) << r.error;
}

// A gated key: cuBLASLt twice (b, then b_up) into one buffer of both
// products, then the pass that gates them and applies the chain.
TEST_F(VendorBaseline, AGatedKeyRunsTwoCallsAndTheGatingPass) {
  for (const Case& c : {Case{"swiglu 77x129x65 bf16, batch 2",
                             77,
                             129,
                             65,
                             2,
                             B,
                             B,
                             false,
                             true,
                             {},
                             false,
                             v1::GATE_SWIGLU},
                        Case{"swiglu+bias 300x136x264 f16 -> f32, b row",
                             300,
                             136,
                             264,
                             1,
                             H,
                             F,
                             false,
                             false,
                             {{"bias", kOut}},
                             false,
                             v1::GATE_SWIGLU}}) {
    const kernels::Baseline baseline = kernels::gemm::CublasLtBaseline(KeyOf(c));
    EXPECT_EQ(baseline.name, "cublasLt+gemm_epilogue_pass") << c.what;
    EXPECT_FALSE(baseline.vendor_call_suffices) << c.what;
    EXPECT_LT(RunBaseline(c, true), 1e-2) << c.what;
  }
}

TEST_F(VendorBaseline, F32ExactAndTf32) {
  const Case exact{"f32 300x200x500", 300, 200, 500, 1, F, F, false, false, {{"bias", kOut}}};
  EXPECT_LT(RunBaseline(exact, false), 1e-5);
  Case tf32 = exact;
  tf32.what = "f32 300x200x500 allowing tf32";
  tf32.tf32 = true;
  const double err = RunBaseline(tf32, false);
  EXPECT_LT(err, kTolTf32);
  // Rounded inputs show: tf32 is not exact f32 (~1e-4 here).
  EXPECT_GT(err, 1e-5);
}

TEST_F(VendorBaseline, EveryAlgorithmTheHeuristicOffersRunsAsAsked) {
  worker::v1::BenchRequest request = Request(kBiasGelu, false);
  request.mutable_vendor_algorithm()->set_heuristic_requested(8);
  const int offered = Run(request, "algo 0").vendor_algorithm().heuristic_results();
  ASSERT_GE(offered, 1);
  ASSERT_LE(offered, 8);
  std::map<std::string, int> algos;
  for (int index = 0; index < offered; ++index) {
    request.mutable_vendor_algorithm()->set_heuristic_index(index);
    const worker::v1::BenchResponse response = Run(request, "each algo");
    EXPECT_EQ(response.vendor_algorithm().heuristic_index(), index);
    EXPECT_EQ(response.vendor_algorithm().heuristic_results(), offered);
    EXPECT_LT(response.rel_error(), 1e-2) << response.vendor_algorithm().description();
    EXPECT_NE(response.vendor_algorithm().description().find("fused epilogue GELU_BIAS"),
              std::string::npos)
        << response.vendor_algorithm().description();
    algos[response.vendor_algorithm().algo()] = index;
  }
  EXPECT_EQ(algos.size(), static_cast<size_t>(offered));
  // Past those offered: a failed run naming how many there are.
  request.mutable_vendor_algorithm()->set_heuristic_index(offered);
  const BenchmarkWorker::Result past = worker_.Run(request, kRunLimit);
  EXPECT_NE(past.outcome, BenchmarkWorker::Outcome::kOk);
  EXPECT_NE(past.error.find("offered " + std::to_string(offered) + " algorithms"),
            std::string::npos)
      << past.error;
}

TEST_F(VendorBaseline, AChosenAlgorithmRunsAgainAndARefusedOneSaysWhatRanInstead) {
  worker::v1::BenchRequest request = Request(kBiasGelu, false);
  request.mutable_vendor_algorithm()->set_heuristic_requested(8);
  const int offered = Run(request, "algo 0").vendor_algorithm().heuristic_results();
  const std::string first = Run(request, "algo 0").vendor_algorithm().algo();
  request.mutable_vendor_algorithm()->set_heuristic_index(offered - 1);
  const v1::VendorAlgorithm last = Run(request, "last algo").vendor_algorithm();

  worker::v1::BenchRequest again = Request(kBiasGelu, false);
  *again.mutable_vendor_algorithm()->mutable_chosen() = last;
  again.set_skip_validation(true);  // as the decision re-times it
  EXPECT_EQ(Run(again, "chosen").vendor_algorithm().algo(), last.algo());

  v1::VendorAlgorithm stale = last;
  stale.set_library_version(last.library_version() - 1);
  *again.mutable_vendor_algorithm()->mutable_chosen() = stale;
  const v1::VendorAlgorithm ran = Run(again, "refused").vendor_algorithm();
  EXPECT_EQ(ran.algo(), first);
  EXPECT_NE(ran.description().find("instead of the chosen " + last.description()),
            std::string::npos)
      << ran.description();
}

TEST_F(VendorBaseline, TheBaselineStepKeepsTheFastestCorrectOfEveryAlgorithmAndWay) {
  TuningLimits limits;
  limits.baseline_algorithms = 4;
  Session session(*backend_, KeyOf(kBiasGelu), limits);
  ASSERT_FALSE(session.space.empty()) << session.why;
  TuningRun run{.session = session.parts,
                .item = session.item,
                .observer = session.observer,
                .cancel = session.cancel};
  const std::optional<TimedBaseline> baseline = TimeBaseline(run);
  ASSERT_TRUE(baseline) << run.progress.error();

  // Both ways, each with every algorithm the heuristic offered, up to 4.
  std::map<bool, int> per_way;
  for (const v1::BaselineCandidate& c : baseline->candidates) {
    ASSERT_TRUE(c.has_algorithm());
    EXPECT_EQ(c.algorithm().heuristic_index(), per_way[c.algorithm().epilogue_pass()]++);
    EXPECT_TRUE(c.error().empty()) << c.algorithm().description() << ": " << c.error();
    EXPECT_LT(c.rel_error(), kTolHalf);
  }
  ASSERT_EQ(per_way.size(), 2u);
  for (const v1::BaselineCandidate& c : baseline->candidates) {
    EXPECT_EQ(per_way[c.algorithm().epilogue_pass()],
              std::min(4, c.algorithm().heuristic_results()))
        << c.algorithm().description();
  }

  // The kept one is the fastest, and what the step reports.
  const v1::BaselineCandidate* fastest = runtime::FastestCandidate(baseline->candidates);
  ASSERT_NE(fastest, nullptr);
  for (const v1::BaselineCandidate& c : baseline->candidates) {
    EXPECT_LE(fastest->timing().median_us(), c.timing().median_us());
  }
  ASSERT_TRUE(baseline->algorithm);
  EXPECT_EQ(baseline->algorithm->algo(), fastest->algorithm().algo());
  EXPECT_EQ(baseline->algorithm->epilogue_pass(), fastest->algorithm().epilogue_pass());
  EXPECT_DOUBLE_EQ(baseline->timing.median_us(), fastest->timing().median_us());
  EXPECT_EQ(baseline->baseline.name,
            fastest->algorithm().epilogue_pass() ? "cublasLt+gemm_epilogue_pass" : "cublasLt");
  EXPECT_EQ(baseline->baseline.source.has_value(), fastest->algorithm().epilogue_pass());
  EXPECT_DOUBLE_EQ(run.progress.baseline_us(), fastest->timing().median_us());
}

TEST_F(VendorBaseline, TheDecisionReTimesTheKeptAlgorithmAndTheRecordKeepsIt) {
  TuningLimits limits;
  limits.baseline_algorithms = 3;
  limits.decision_rounds = 2;
  Session session(*backend_, KeyOf(kBiasGelu), limits);
  ASSERT_FALSE(session.space.empty()) << session.why;
  TuningSession tuning(session.space, *backend_, session.device, session.worker, session.pool,
                       session.limits);
  const TuningOutcome outcome = tuning.Run(session.item, {}, session.observer, session.cancel);
  ASSERT_TRUE(outcome.record) << outcome.progress.error();
  const v1::Record& record = *outcome.record;
  ASSERT_TRUE(record.has_baseline_algorithm());
  ASSERT_GE(record.baseline_candidates_size(), 2);
  const v1::BaselineCandidate* fastest = runtime::FastestCandidate(record.baseline_candidates());
  ASSERT_NE(fastest, nullptr);
  EXPECT_EQ(record.baseline_algorithm().algo(), fastest->algorithm().algo());
  EXPECT_EQ(record.baseline_name(),
            fastest->algorithm().epilogue_pass() ? "cublasLt+gemm_epilogue_pass" : "cublasLt");
  // Re-timed beside the variants, as the algorithm it is.
  ASSERT_TRUE(record.decision().has_winner()) << record.decision().reason();
  EXPECT_GT(record.decision().baseline().repetitions(), 0);
  const std::string label = record.baseline_name() + " algo " +
                            std::to_string(record.baseline_algorithm().heuristic_index()) + " of " +
                            std::to_string(record.baseline_algorithm().heuristic_results());
  EXPECT_NE(record.decision().reason().find(label), std::string::npos)
      << record.decision().reason();
}

}  // namespace
}  // namespace tiletune::tuner
