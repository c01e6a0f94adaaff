// End to end: real kernels compiled by the host backend, run by the real
// tiletune-worker through BenchmarkWorker.
#include "tuner/benchmark_worker.h"

#include <gtest/gtest.h>

#include <thread>

#include "kernels/core/kernel_key.h"
#include "kernels/source/host_source.h"
#include "tests/tuner/host_kernel_fixture.h"
#include "tuner/worker/output_validation.h"

namespace tiletune::tuner {
namespace {

using namespace std::chrono_literals;
using testing::CompileRequest;
using testing::HostTemplate;
using testing::MakeKey;
using Outcome = BenchmarkWorker::Outcome;
using Clock = std::chrono::steady_clock;

BenchmarkWorker::Options WorkerOptions() {
  return {testing::WorkerBinary(), {}};
}

// The first valid variant of the key's space that matches `wanted`.
kernels::Variant PickVariant(const v1::KernelKey& key, const kernels::Variant& wanted) {
  for (const auto& v : HostTemplate(key).Space(key).ValidVariants()) {
    bool matches = true;
    for (const auto& [name, value] : wanted) matches = matches && v.at(name) == value;
    if (matches) return v;
  }
  throw std::runtime_error("no variant with " + kernels::VariantString(wanted));
}

worker::v1::BenchRequest VariantRequest(const v1::KernelKey& key, const kernels::Variant& wanted) {
  return CompileRequest(key, HostTemplate(key).Source(key, PickVariant(key, wanted)));
}

// A cheap kernel with a planted fault (see kernels/source/host_source.h), or
// none for fault 0.
worker::v1::BenchRequest PlantedRequest(int fault) {
  const v1::KernelKey key = MakeKey("softmax", {{"rows", 3}, {"cols", 5}});
  kernels::Variant v = HostTemplate(key).Space(key).ValidVariants().front();
  if (fault != 0) v[std::string(kernels::kPlantedFault)] = fault;
  return CompileRequest(key, HostTemplate(key).Source(key, v));
}

void ExpectSaneTiming(const v1::Timing& t, int min_repetitions) {
  EXPECT_GE(t.repetitions(), min_repetitions);
  EXPECT_GT(t.median_us(), 0);
  EXPECT_LE(t.min_us(), t.median_us());
  EXPECT_LE(t.median_us(), t.max_us());
  EXPECT_GE(t.spread(), 0);
}

void ExpectValidated(const BenchmarkWorker::Result& r) {
  ASSERT_EQ(r.outcome, Outcome::kOk) << OutcomeName(r.outcome) << ": " << r.error;
  EXPECT_EQ(r.response.status(), worker::v1::BenchResponse::STATUS_OK);
  EXPECT_LT(r.response.rel_error(), 1e-5);
  EXPECT_EQ(r.response.unwritten_elements(), 0);
  ExpectSaneTiming(r.response.timing(), 3);
}

TEST(BenchmarkWorker, GemmWithEpilogueChainOnAnOddShape) {
  const v1::KernelKey key = MakeKey("gemm", {{"m", 37}, {"n", 53}, {"k", 29}},
                                    {"bias", "gelu_tanh", "residual_add", "scale"});
  // Two threads over 32-row blocks: the second block holds 5 rows.
  const auto request = VariantRequest(key, {{"tile_m", 32}, {"micro_m", 8}, {"threads", 2}});
  BenchmarkWorker worker(WorkerOptions());
  const auto r = worker.Run(request, 30s);
  ExpectValidated(r);
  EXPECT_EQ(worker.restarts(), 0);
}

TEST(BenchmarkWorker, BatchedColumnMajorGemmAcrossDepthBlocks) {
  v1::KernelKey key =
      MakeKey("gemm", {{"m", 90}, {"n", 70}, {"k", 150}, {"batch", 3}}, {"relu", "bias"});
  for (const char* tensor : {"a", "b"}) {
    auto* l = key.add_layouts();
    l->set_tensor(tensor);
    l->set_layout(v1::LAYOUT_COL_MAJOR);
  }
  // tile_k 64 < k: partial sums accumulate over three depth blocks. One
  // 96-row block per batch: the second thread's blocks span two batches.
  const auto request = VariantRequest(key, {{"tile_m", 96},
                                            {"tile_k", 64},
                                            {"micro_m", 6},
                                            {"micro_n", 32},
                                            {"k_unroll", 4},
                                            {"threads", 2}});
  BenchmarkWorker worker(WorkerOptions());
  ExpectValidated(worker.Run(request, 30s));
}

TEST(BenchmarkWorker, GemmBaselineIsValidatedToo) {
  const v1::KernelKey key = MakeKey("gemm", {{"m", 37}, {"n", 53}, {"k", 29}}, {"bias", "silu"});
  const auto baseline = HostTemplate(key).BaselineFor(key);
  ASSERT_TRUE(baseline.source);
  BenchmarkWorker worker(WorkerOptions());
  ExpectValidated(worker.Run(CompileRequest(key, *baseline.source), 30s));
}

TEST(BenchmarkWorker, SoftmaxOnOddColumns) {
  const v1::KernelKey key = MakeKey("softmax", {{"rows", 19}, {"cols", 131}}, {"scale"});
  BenchmarkWorker worker(WorkerOptions());
  for (int64_t online : {0, 1}) {
    const auto request = VariantRequest(
        key,
        {{"vec", 8}, {"online", online}, {"fast_exp", 1}, {"rows_per_task", 8}, {"threads", 2}});
    ExpectValidated(worker.Run(request, 30s));
  }
}

TEST(BenchmarkWorker, RmsnormOnOddColumns) {
  const v1::KernelKey key = MakeKey("rmsnorm", {{"rows", 7}, {"cols", 45}}, {"residual_add"});
  BenchmarkWorker worker(WorkerOptions());
  ExpectValidated(worker.Run(VariantRequest(key, {{"vec", 16}, {"threads", 2}}), 30s));
}

TEST(BenchmarkWorker, LayernormOnOddColumns) {
  const v1::KernelKey key = MakeKey("layernorm", {{"rows", 5}, {"cols", 77}}, {"gelu_erf"});
  BenchmarkWorker worker(WorkerOptions());
  for (int64_t welford : {0, 1}) {
    ExpectValidated(worker.Run(VariantRequest(key, {{"vec", 8}, {"welford", welford}}), 30s));
  }
}

// An odd GEMM (301 rows: a partial last tile for every tile height of 16
// and up; 67 columns) and a reference policy that samples it: its whole
// reference would be ~1.8e6 operations, the limit is 1e4.
constexpr int64_t kOddM = 301, kOddN = 67;

v1::KernelKey OddGemm() {
  return MakeKey("gemm", {{"m", kOddM}, {"n", kOddN}, {"k", 45}}, {"bias", "residual_add"});
}

worker::v1::BenchRequest Sampled(worker::v1::BenchRequest request) {
  request.mutable_reference()->set_max_full_flops(1e4);
  request.mutable_reference()->set_sample_rows(8);
  request.mutable_reference()->set_threads(2);
  return request;
}

// A real host kernel of the key followed by `statements` over its `args`:
// a fault planted in one element.
worker::v1::BenchRequest FaultyRequest(const v1::KernelKey& key, const kernels::Variant& wanted,
                                       const std::string& statements) {
  kernels::KernelSource source = HostTemplate(key).Source(key, PickVariant(key, wanted));
  const size_t end = source.code.rfind("  return status;\n");
  EXPECT_NE(end, std::string::npos) << source.code;
  source.code.insert(end, statements);
  return CompileRequest(key, source);
}

// Puts the poison back into output element `index`: as if never written.
std::string Unwrite(int64_t index) {
  return "  { const unsigned bits = " + std::to_string(kPoisonBits) +
         "u; __builtin_memcpy(&tt::floats(args->c)[" + std::to_string(index) + "], &bits, 4); }\n";
}

TEST(BenchmarkWorker, AboveTheReferenceLimitOutputsAreComparedOnSampledRows) {
  const v1::KernelKey softmax = MakeKey("softmax", {{"rows", 333}, {"cols", 45}}, {"scale"});
  const std::pair<v1::KernelKey, kernels::Variant> cases[] = {
      {OddGemm(), {{"tile_m", 32}, {"threads", 2}}},
      {softmax, {{"rows_per_task", 32}, {"threads", 2}}}};
  BenchmarkWorker worker(WorkerOptions());
  for (const auto& [key, wanted] : cases) {
    const int64_t rows = kernels::DimSize(key, key.op() == "gemm" ? "m" : "rows").value();
    const int64_t cols = kernels::DimSize(key, key.op() == "gemm" ? "n" : "cols").value();
    auto request = Sampled(VariantRequest(key, wanted));
    auto r = worker.Run(request, 30s);
    ExpectValidated(r);
    const auto& coverage = r.response.validation();
    EXPECT_EQ(coverage.output_elements(), rows * cols);
    EXPECT_EQ(coverage.checked_elements() % cols, 0);
    // 8 drawn rows, the first and last, and a few partial-tile rows.
    EXPECT_GE(coverage.checked_elements(), 10 * cols) << key.op();
    EXPECT_LE(coverage.checked_elements(), 26 * cols) << key.op();
    // Below the limit the whole output is compared.
    request.mutable_reference()->set_max_full_flops(1e9);
    r = worker.Run(request, 30s);
    ExpectValidated(r);
    EXPECT_EQ(r.response.validation().checked_elements(), rows * cols) << key.op();
  }
}

TEST(BenchmarkWorker, SampledValidationCatchesAWrongValueInThePartialLastTile) {
  // Row 288 begins the last 32-row tile (13 rows), column 66 is the last.
  const int64_t index = 288 * kOddN + 66;
  const auto request = Sampled(FaultyRequest(
      OddGemm(), {{"tile_m", 32}, {"threads", 2}},
      "  tt::floats(args->c)[" + std::to_string(index) + "] += 64.0f;  // one wrong element\n"));
  BenchmarkWorker worker(WorkerOptions());
  const auto r = worker.Run(request, 30s);
  EXPECT_EQ(r.outcome, Outcome::kWrongResult) << r.error;
  EXPECT_NE(r.error.find("sampled rows exceeds tolerance"), std::string::npos) << r.error;
  EXPECT_NE(r.error.find("at element " + std::to_string(index)), std::string::npos) << r.error;
  EXPECT_LT(r.response.validation().checked_elements(), kOddM * kOddN);
}

TEST(BenchmarkWorker, SampledValidationCatchesAnUnwrittenElementAnywhere) {
  BenchmarkWorker worker(WorkerOptions());
  // Rows the sample may or may not hold: every element is scanned.
  for (const int64_t row : {int64_t{1}, int64_t{150}, int64_t{287}}) {
    const auto request = Sampled(
        FaultyRequest(OddGemm(), {{"tile_m", 32}, {"threads", 2}}, Unwrite(row * kOddN + 7)));
    const auto r = worker.Run(request, 30s);
    EXPECT_EQ(r.outcome, Outcome::kWrongResult) << r.error;
    EXPECT_EQ(r.response.unwritten_elements(), 1);
    EXPECT_NE(r.error.find("1 of 20167 output elements were never written"), std::string::npos)
        << r.error;
  }
}

// The worker keeps a problem's poison between runs (ValidationBuffers): a
// kernel that leaves an element as it found it, after a run that wrote
// every element, must still be seen to leave it unwritten.
TEST(BenchmarkWorker, EveryRunOfAProblemStartsFromPoison) {
  const v1::KernelKey key = OddGemm();
  kernels::KernelSource source =
      HostTemplate(key).Source(key, PickVariant(key, {{"tile_m", 32}, {"threads", 2}}));
  BenchmarkWorker worker(WorkerOptions());
  const auto whole = worker.Run(Sampled(CompileRequest(key, source)), 30s);
  ASSERT_EQ(whole.outcome, Outcome::kOk) << whole.error;
  const std::string element = "tt::floats(args->c)[" + std::to_string(150 * kOddN + 7) + "]";
  const size_t call = source.code.find("  const int status = ");
  ASSERT_NE(call, std::string::npos) << source.code;
  source.code.insert(source.code.find('\n', call) + 1, "  " + element + " = kept;\n");
  source.code.insert(call, "  const float kept = " + element + ";\n");
  const auto r = worker.Run(Sampled(CompileRequest(key, source)), 30s);
  EXPECT_EQ(r.outcome, Outcome::kWrongResult) << r.error;
  EXPECT_EQ(r.response.unwritten_elements(), 1) << r.error;
}

TEST(BenchmarkWorker, HangTimesOutAndTheNextRequestWorks) {
  const auto hang = PlantedRequest(1);
  const auto good = PlantedRequest(0);
  BenchmarkWorker worker(WorkerOptions());
  const auto start = Clock::now();
  const auto r = worker.Run(hang, 1s);
  EXPECT_EQ(r.outcome, Outcome::kTimeout) << r.error;
  EXPECT_LT(Clock::now() - start, 2s);
  EXPECT_NE(r.error.find("1000 ms"), std::string::npos) << r.error;
  EXPECT_EQ(worker.restarts(), 0);
  ExpectValidated(worker.Run(good, 30s));
  EXPECT_EQ(worker.restarts(), 1);
}

TEST(BenchmarkWorker, CrashIsNamedAndTheWorkerRestarts) {
  const auto crash = PlantedRequest(2);
  const auto good = PlantedRequest(0);
  BenchmarkWorker worker(WorkerOptions());
  ExpectValidated(worker.Run(good, 30s));
  const auto r = worker.Run(crash, 30s);
  EXPECT_EQ(r.outcome, Outcome::kCrash);
  EXPECT_EQ(r.error, "worker died: SIGSEGV");
  ExpectValidated(worker.Run(good, 30s));
  EXPECT_EQ(worker.restarts(), 1);
}

TEST(BenchmarkWorker, WrongResultIsRejectedWithItsError) {
  BenchmarkWorker worker(WorkerOptions());
  const auto r = worker.Run(PlantedRequest(3), 30s);
  EXPECT_EQ(r.outcome, Outcome::kWrongResult);
  EXPECT_EQ(r.response.status(), worker::v1::BenchResponse::STATUS_WRONG_RESULT);
  EXPECT_GT(r.response.rel_error(), 0.1);
  EXPECT_NE(r.error.find("relative error"), std::string::npos) << r.error;
  EXPECT_EQ(worker.restarts(), 0);  // a wrong answer is an answer: no restart
}

TEST(BenchmarkWorker, CancelEndsARunPromptly) {
  const auto hang = PlantedRequest(1);
  BenchmarkWorker worker(WorkerOptions());
  std::atomic<bool> cancel{false};
  std::thread canceller([&] {
    std::this_thread::sleep_for(200ms);
    cancel = true;
  });
  const auto start = Clock::now();
  const auto r = worker.Run(hang, 60s, &cancel);
  const auto elapsed = Clock::now() - start;
  canceller.join();
  EXPECT_EQ(r.outcome, Outcome::kCancelled);
  // Long before the run's 60 s limit; only a hang comes near this.
  EXPECT_LT(elapsed, 30s);
}

TEST(BenchmarkWorker, LoadErrorsNameWhatIsMissing) {
  auto request = PlantedRequest(0);
  BenchmarkWorker worker(WorkerOptions());

  auto missing_entry = request;
  missing_entry.set_entry("tiletune_no_such_entry");
  auto r = worker.Run(missing_entry, 30s);
  EXPECT_EQ(r.outcome, Outcome::kLoadError);
  EXPECT_NE(r.error.find("tiletune_no_such_entry"), std::string::npos) << r.error;

  request.set_artifact_path("/nonexistent/kernel.so");
  r = worker.Run(request, 30s);
  EXPECT_EQ(r.outcome, Outcome::kLoadError);
  EXPECT_NE(r.error.find("/nonexistent/kernel.so"), std::string::npos) << r.error;

  request.set_backend("opencl");
  r = worker.Run(request, 30s);
  EXPECT_EQ(r.outcome, Outcome::kLoadError);
  EXPECT_NE(r.error.find("no executor"), std::string::npos) << r.error;
  EXPECT_EQ(worker.restarts(), 0);
}

TEST(BenchmarkWorker, InvalidRequestsAreRunErrors) {
  auto request = PlantedRequest(0);
  BenchmarkWorker worker(WorkerOptions());
  auto bad_key = request;
  bad_key.mutable_key()->clear_shape();
  auto r = worker.Run(bad_key, 30s);
  EXPECT_EQ(r.outcome, Outcome::kRunError);
  EXPECT_NE(r.error.find("invalid key"), std::string::npos) << r.error;

  request.set_tolerance(0);
  r = worker.Run(request, 30s);
  EXPECT_EQ(r.outcome, Outcome::kRunError);
  EXPECT_NE(r.error.find("tolerance"), std::string::npos) << r.error;

  // The baseline's run skips validation, so it needs no tolerance.
  request.set_skip_validation(true);
  r = worker.Run(request, 30s);
  EXPECT_EQ(r.outcome, Outcome::kOk) << r.error;
  ExpectSaneTiming(r.response.timing(), 3);
}

TEST(BenchmarkWorker, ProtocolBoundsTheRepetitions) {
  auto request = PlantedRequest(0);
  BenchmarkWorker worker(WorkerOptions());
  request.mutable_protocol()->set_min_repetitions(4);
  request.mutable_protocol()->set_max_repetitions(7);
  request.mutable_protocol()->set_min_seconds(0);
  auto r = worker.Run(request, 30s);
  ASSERT_EQ(r.outcome, Outcome::kOk) << r.error;
  EXPECT_EQ(r.response.timing().repetitions(), 4);
  // Past min_repetitions, min_seconds asks for more, up to the cap.
  request.mutable_protocol()->set_min_seconds(10);
  r = worker.Run(request, 30s);
  ASSERT_EQ(r.outcome, Outcome::kOk) << r.error;
  EXPECT_EQ(r.response.timing().repetitions(), 7);
}

TEST(BenchmarkWorker, TheHostExecutorCallsNoVendorLibrary) {
  auto request = PlantedRequest(0);
  request.set_vendor_baseline("cublasLt");
  BenchmarkWorker worker(WorkerOptions());
  const auto r = worker.Run(request, 30s);
  EXPECT_EQ(r.outcome, Outcome::kLoadError);
  EXPECT_NE(r.error.find("host executor calls no vendor library (asked for cublasLt)"),
            std::string::npos)
      << r.error;
  EXPECT_EQ(worker.restarts(), 0);
}

TEST(BenchmarkWorker, MissingWorkerBinaryIsARunError) {
  BenchmarkWorker worker({"/nonexistent/tiletune-worker", {}});
  const auto r = worker.Run(worker::v1::BenchRequest(), 5s);
  EXPECT_EQ(r.outcome, Outcome::kRunError);
  EXPECT_NE(r.error.find("cannot start"), std::string::npos) << r.error;
}

TEST(BenchmarkWorker, StopEndsTheWorkerWithoutCountingARestart) {
  const auto good = PlantedRequest(0);
  BenchmarkWorker worker(WorkerOptions());
  ExpectValidated(worker.Run(good, 30s));
  worker.Stop();
  ExpectValidated(worker.Run(good, 30s));
  EXPECT_EQ(worker.restarts(), 0);
}

}  // namespace
}  // namespace tiletune::tuner
