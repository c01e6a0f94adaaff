// The GPU row and element-wise kernels with prologues and epilogues, and
// attention (its KV length as the row length), run by the real worker on
// a CUDA device and checked against the float64 reference, at odd row
// lengths: 1, 33 (one partial warp), 4097 (a chunk and one element) and 40000
// (many chunks: multi-pass, or one pass through shared memory), and with 2051
// rows (persistent grids). The baseline of each key and every valid variant
// of every family serving it.
// Skips, saying why, without a CUDA driver and device.
#include <gtest/gtest.h>

#include <atomic>
#include <filesystem>
#include <thread>

#include "kernels/core/kernel_key.h"
#include "kernels/core/kernel_template.h"
#include "runtime/backend_registry.h"
#include "tests/tuner/host_kernel_fixture.h"

namespace tiletune::tuner {
namespace {

using namespace std::chrono_literals;

struct CudaDevice {
  std::unique_ptr<runtime::Backend> backend;
  runtime::DeviceInfo device;
};

std::optional<CudaDevice> OpenCuda(std::string* why) {
  runtime::BackendOptions options;
  options.enabled = {"cuda"};
  options.cache_dir =
      (std::filesystem::path(TILETUNE_BUILD_DIR) / "test-cache" / "gpu-row-kernels").string();
  options.rtc_binary = std::string(TILETUNE_BUILD_DIR) + "/bin/tiletune-rtc";
  auto found = runtime::DiscoverBackends(options);
  if (found.backends.empty() || found.backends[0]->Devices().empty()) {
    *why = found.statuses.empty() ? "no cuda status" : found.statuses[0].reason;
    return std::nullopt;
  }
  CudaDevice d;
  d.device = found.backends[0]->Devices()[0];
  d.backend = std::move(found.backends[0]);
  return d;
}

v1::KernelKey RowKey(const std::string& op, int64_t rows, int64_t cols,
                     const std::vector<std::string>& prologue,
                     const std::vector<std::string>& chain) {
  v1::KernelKey key = testing::MakeKey(op, {{"rows", rows}, {"cols", cols}}, chain);
  for (const auto& name : prologue) {
    auto* p = key.add_prologue();
    p->set_op(name);
    if (name == "scale") p->set_scalar(0.125);
  }
  return key;
}

// Relative errors allowed against the float64 reference: f32 outputs, and
// outputs rounded once to bf16 (8 bits of mantissa: 2^-9 relative).
constexpr double kF32Tolerance = 1e-5;
constexpr double kBf16Tolerance = 1e-2;

class GpuRowKernelsOnDevice : public ::testing::TestWithParam<int64_t> {
 protected:
  void SetUp() override {
    std::string why;
    cuda_ = OpenCuda(&why);
    if (!cuda_) GTEST_SKIP() << "no CUDA device: " << why;
  }

  void ExpectEveryVariantCorrect(const v1::KernelKey& key, double tolerance = kF32Tolerance) {
    std::string why;
    const auto templates = kernels::ServingKernelTemplates(key, "cuda", &why);
    ASSERT_FALSE(templates.empty()) << why;
    // The baseline, then every variant of every family serving the key.
    std::vector<kernels::KernelSource> sources = {*templates.front()->BaselineFor(key).source};
    for (const kernels::KernelTemplate* t : templates) {
      for (const auto& v : t->Space(key).ValidVariants()) sources.push_back(t->Source(key, v));
    }
    // Compiles in parallel (as the daemon's compile pool does), then runs.
    std::vector<runtime::CompileResult> compiled(sources.size());
    std::atomic<size_t> next{0};
    std::vector<std::thread> pool;
    for (unsigned i = 0; i < std::max(1u, std::thread::hardware_concurrency()); ++i) {
      pool.emplace_back([&] {
        for (size_t s; (s = next++) < sources.size();) {
          compiled[s] = cuda_->backend->Compile(sources[s], cuda_->device, {});
        }
      });
    }
    for (auto& thread : pool) thread.join();
    BenchmarkWorker worker({testing::WorkerBinary(), cuda_->device.worker_env});
    for (size_t s = 0; s < sources.size(); ++s) {
      const auto& source = sources[s];
      ASSERT_TRUE(compiled[s].ok) << source.entry << ":\n" << compiled[s].log;
      worker::v1::BenchRequest request;
      request.set_backend("cuda");
      request.set_artifact_path(compiled[s].artifact_path);
      request.set_entry(source.entry);
      *request.mutable_key() = key;
      *request.mutable_launch() = source.launch;
      request.set_seed(99);
      request.mutable_protocol()->set_warmup(0);
      request.mutable_protocol()->set_min_repetitions(1);
      request.mutable_protocol()->set_max_repetitions(1);
      request.set_tolerance(tolerance);
      const auto result = worker.Run(request, 60s);
      EXPECT_EQ(result.outcome, BenchmarkWorker::Outcome::kOk)
          << kernels::CanonicalKeyString(key) << " " << source.entry << ": " << result.error;
    }
  }

  std::optional<CudaDevice> cuda_;
};

TEST_P(GpuRowKernelsOnDevice, SoftmaxWithScaleAndMask) {
  ExpectEveryVariantCorrect(RowKey("softmax", 5, GetParam(), {"scale", "residual_add"}, {}));
}

TEST_P(GpuRowKernelsOnDevice, ResidualAddRmsnorm) {
  ExpectEveryVariantCorrect(RowKey("rmsnorm", 5, GetParam(), {"residual_add"}, {"scale"}));
}

TEST_P(GpuRowKernelsOnDevice, LayernormWithBiasPrologueAndResidualEpilogue) {
  ExpectEveryVariantCorrect(RowKey("layernorm", 3, GetParam(), {"bias"}, {"residual_add"}));
}

// The residual stream: x + residual written next to the norm; the worker
// checks both outputs.
TEST_P(GpuRowKernelsOnDevice, ResidualSumWrittenByRmsnormLayernormAndSoftmax) {
  for (const char* op : {"rmsnorm", "layernorm", "softmax"}) {
    v1::KernelKey key = RowKey(op, 5, GetParam(), {"residual_add"}, {});
    key.set_write_prologue_output(true);
    ExpectEveryVariantCorrect(key);
    key.set_input_dtype(v1::DTYPE_BF16);
    key.set_output_dtype(v1::DTYPE_BF16);
    ExpectEveryVariantCorrect(key, kBf16Tolerance);
  }
}

TEST_P(GpuRowKernelsOnDevice, ElementwiseChain) {
  ExpectEveryVariantCorrect(
      RowKey("elementwise", 7, GetParam(), {}, {"bias", "gelu_tanh", "residual_add", "silu"}));
}

// 16-bit rows: loads of up to 8 elements, f32 accumulation, one rounding
// at the store (so the tolerance is bf16's, not f32's).
TEST_P(GpuRowKernelsOnDevice, Bf16SoftmaxRmsnormAndLayernorm) {
  for (const char* op : {"softmax", "rmsnorm", "layernorm"}) {
    v1::KernelKey key = RowKey(op, 5, GetParam(), {"residual_add"}, {"scale"});
    key.set_input_dtype(v1::DTYPE_BF16);
    key.set_output_dtype(v1::DTYPE_BF16);
    ExpectEveryVariantCorrect(key, kBf16Tolerance);
  }
}

TEST_P(GpuRowKernelsOnDevice, Bf16ElementwiseChain) {
  v1::KernelKey key =
      RowKey("elementwise", 7, GetParam(), {}, {"bias", "gelu_tanh", "residual_add"});
  key.set_input_dtype(v1::DTYPE_BF16);
  key.set_output_dtype(v1::DTYPE_BF16);
  ExpectEveryVariantCorrect(key, kBf16Tolerance);
}

// Attention with the row length as its KV length (1, 33, 4097, 40000): 77
// queries no block divides, grouped-query heads, bottom-right causal (with
// 1 and 33 keys the first queries see none and are zeros), BHSD; and a
// decode query in f16 with a residual chain. Probabilities are rounded to
// the input type before P V, so the tolerance is bf16's.
v1::KernelKey AttentionKey(int64_t q_len, int64_t kv_len, int64_t head_dim, v1::DType dtype,
                           const std::vector<std::string>& chain = {}) {
  v1::KernelKey key = testing::MakeKey("attention",
                                       {{"batch", 2},
                                        {"q_heads", 8},
                                        {"kv_heads", 2},
                                        {"q_len", q_len},
                                        {"kv_len", kv_len},
                                        {"head_dim", head_dim}},
                                       chain);
  key.set_input_dtype(dtype);
  key.set_output_dtype(dtype);
  return key;
}

TEST_P(GpuRowKernelsOnDevice, AttentionCausalGroupedBhsd) {
  v1::KernelKey key = AttentionKey(77, GetParam(), 128, v1::DTYPE_BF16);
  key.set_attention_mask(v1::ATTENTION_MASK_CAUSAL);
  key.set_sequence_layout(v1::SEQUENCE_LAYOUT_BHSD);
  ExpectEveryVariantCorrect(key, kBf16Tolerance);
  key.set_attention_mask(v1::ATTENTION_MASK_NONE);
  key.set_sequence_layout(v1::SEQUENCE_LAYOUT_BSHD);
  ExpectEveryVariantCorrect(key, kBf16Tolerance);
}

// The additive mask tensor the worker draws (one key in five -inf, so with
// one key some rows see none: o = 0, lse = -inf) and lse, checked by the
// worker against float64 beside o.
v1::KernelKey MaskAndLseKey(int64_t q_len, int64_t kv_len, int64_t head_dim) {
  v1::KernelKey key = AttentionKey(q_len, kv_len, head_dim, v1::DTYPE_BF16);
  key.set_attention_mask(v1::ATTENTION_MASK_TENSOR);
  key.set_write_lse(true);
  return key;
}

TEST_P(GpuRowKernelsOnDevice, AttentionWithAMaskTensorAndLse) {
  ExpectEveryVariantCorrect(MaskAndLseKey(77, GetParam(), 64), kBf16Tolerance);
}

// head_dim 256: the flash kernel reads Q from shared memory at each key tile.
TEST_P(GpuRowKernelsOnDevice, AttentionHeadDim256) {
  v1::KernelKey key = AttentionKey(77, GetParam(), 256, v1::DTYPE_BF16);
  key.set_attention_mask(v1::ATTENTION_MASK_CAUSAL);
  ExpectEveryVariantCorrect(key, kBf16Tolerance);
}

// The same in decode, where the query heads of a KV head share MMA rows.
TEST_P(GpuRowKernelsOnDevice, AttentionDecodeWithAMaskTensorAndLse) {
  ExpectEveryVariantCorrect(MaskAndLseKey(5, GetParam(), 128), kBf16Tolerance);
}

TEST_P(GpuRowKernelsOnDevice, AttentionDecodeWithAResidualChain) {
  ExpectEveryVariantCorrect(AttentionKey(1, GetParam(), 64, v1::DTYPE_F16, {"residual_add"}),
                            kBf16Tolerance);
}

INSTANTIATE_TEST_SUITE_P(OddRowLengths, GpuRowKernelsOnDevice,
                         ::testing::Values(int64_t{1}, int64_t{33}, int64_t{4097}, int64_t{40000}));

// Enough rows for persistent grids (more than 1024 row groups), whose blocks
// stride over several rows each, next to the one-pass and multi-pass variants.
class ManyRowsOnDevice : public GpuRowKernelsOnDevice {};

TEST_P(ManyRowsOnDevice, PersistentGridsCoverEveryRow) {
  for (const char* op : {"rmsnorm", "layernorm", "softmax"}) {
    v1::KernelKey key = RowKey(op, 2051, GetParam(), {"residual_add"}, {});
    key.set_write_prologue_output(true);
    ExpectEveryVariantCorrect(key);
  }
}

INSTANTIATE_TEST_SUITE_P(RowLengths, ManyRowsOnDevice, ::testing::Values(int64_t{1000}));

}  // namespace
}  // namespace tiletune::tuner
