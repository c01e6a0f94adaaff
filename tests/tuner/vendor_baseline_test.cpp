// The cuBLASLt baseline end to end: the real tiletune-worker calls cuBLASLt
// (and the compiled epilogue pass where cuBLASLt's epilogue cannot take the
// chain) and validates the result against the float64 reference like any
// variant. Skips without a CUDA driver, device or cuBLASLt.
#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>

#include "kernels/core/kernel_key.h"
#include "kernels/ops/gemm/cublaslt_baseline.h"
#include "runtime/cuda/cuda_backend.h"
#include "tiletune/worker/v1/worker.pb.h"
#include "tuner/benchmark_worker.h"

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
};

v1::KernelKey KeyOf(const Case& c) {
  v1::KernelKey key;
  key.set_op("gemm");
  key.set_input_dtype(c.in);
  key.set_output_dtype(c.out);
  key.set_allow_tf32(c.tf32);
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

  // Runs the key's cuda baseline through the worker; its relative error.
  double RunBaseline(const Case& c, const std::string& expected_name) {
    const v1::KernelKey key = KeyOf(c);
    std::string why;
    const kernels::KernelTemplate* t = kernels::FindKernelTemplate(key, "cuda", &why);
    if (!t) {
      ADD_FAILURE() << c.what << ": " << why;
      return NAN;
    }
    const kernels::Baseline baseline = t->BaselineFor(key);
    EXPECT_EQ(baseline.name, expected_name) << c.what;
    EXPECT_EQ(baseline.vendor_library, kernels::gemm::kCublasLtName) << c.what;
    worker::v1::BenchRequest request;
    request.set_backend("cuda");
    request.set_vendor_baseline(baseline.vendor_library);
    if (baseline.source) {
      const auto compiled = backend_->Compile(*baseline.source, backend_->Devices()[0], {});
      if (!compiled.ok) {
        ADD_FAILURE() << c.what << ": the epilogue pass did not compile:\n" << compiled.log;
        return NAN;
      }
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
    BenchmarkWorker worker({std::string(TILETUNE_BUILD_DIR) + "/bin/tiletune-worker", {}});
    const BenchmarkWorker::Result r = worker.Run(request, kRunLimit);
    EXPECT_EQ(r.outcome, BenchmarkWorker::Outcome::kOk)
        << c.what << ": " << OutcomeName(r.outcome) << ": " << r.error;
    EXPECT_EQ(r.response.unwritten_elements(), 0) << c.what;
    EXPECT_GT(r.response.timing().median_us(), 0) << c.what;
    return r.response.rel_error();
  }

  std::unique_ptr<runtime::cuda::CudaBackend> backend_;
};

constexpr auto B = v1::DTYPE_BF16, H = v1::DTYPE_F16, F = v1::DTYPE_F32;
constexpr auto kOut = v1::DTYPE_UNSPECIFIED;  // chain tensors in the output dtype

TEST_F(VendorBaseline, Bf16RowMajorSquare) {
  const double err = RunBaseline(
      {"bf16 4096x4096x1024 row/row", 4096, 4096, 1024, 1, B, B, false, false, {}}, "cublasLt");
  EXPECT_LT(err, 1e-2);
}

TEST_F(VendorBaseline, OddShapesAndLayouts) {
  const Case cases[] = {
      {"77x129x65 bf16 a row, b col", 77, 129, 65, 1, B, B, false, true, {}},
      {"77x129x65 f16 -> f32 a col, b row", 77, 129, 65, 1, H, F, true, false, {}},
      {"77x129x65 bf16 a col, b col", 77, 129, 65, 1, B, B, true, true, {}},
  };
  for (const Case& c : cases) EXPECT_LT(RunBaseline(c, "cublasLt"), 1e-2) << c.what;
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
                        "cublasLt"),
            1e-2);
}

TEST_F(VendorBaseline, BiasGeluTanhInCublasLtsEpilogue) {
  EXPECT_LT(RunBaseline({"bias+gelu_tanh 256x512x128 bf16, b col",
                         256,
                         512,
                         128,
                         1,
                         B,
                         B,
                         false,
                         true,
                         {{"bias", kOut}, {"gelu_tanh", kOut}}},
                        "cublasLt"),
            1e-2);
}

TEST_F(VendorBaseline, ScaleAndResidualFoldIntoAlphaAndBeta) {
  EXPECT_LT(RunBaseline({"scale+residual+bias 77x129x65 bf16, batch 2",
                         77,
                         129,
                         65,
                         2,
                         B,
                         B,
                         false,
                         true,
                         {{"scale", kOut}, {"residual_add", kOut}, {"bias", kOut}}},
                        "cublasLt"),
            1e-2);
}

TEST_F(VendorBaseline, BiasGeluErfResidualRunsTheEpiloguePass) {
  EXPECT_LT(RunBaseline({"bias+gelu_erf+residual 77x129x65 bf16, batch 2",
                         77,
                         129,
                         65,
                         2,
                         B,
                         B,
                         false,
                         true,
                         {{"bias", kOut}, {"gelu_erf", kOut}, {"residual_add", kOut}}},
                        "cublasLt+gemm_epilogue_pass"),
            1e-2);
}

TEST_F(VendorBaseline, F32ExactAndTf32) {
  const Case exact{"f32 300x200x500", 300, 200, 500, 1, F, F, false, false, {{"bias", kOut}}};
  EXPECT_LT(RunBaseline(exact, "cublasLt"), 1e-5);
  Case tf32 = exact;
  tf32.what = "f32 300x200x500 allowing tf32";
  tf32.tf32 = true;
  const double err = RunBaseline(tf32, "cublasLt");
  EXPECT_LT(err, kTolTf32);
  // Rounded inputs show: tf32 is not exact f32 (~1e-4 here).
  EXPECT_GT(err, 1e-5);
}

}  // namespace
}  // namespace tiletune::tuner
