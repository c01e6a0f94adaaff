// GPU-only: every test here skips, naming the reason, where libcuda, a
// device or NVRTC is missing.
#include "runtime/cuda/cuda_executor.h"

#include <gtest/gtest.h>

#include <cmath>
#include <fstream>
#include <numeric>
#include <sstream>
#include <vector>

#include "kernels/tt/kernel_args.h"
#include "runtime/cuda/cuda_fingerprint.h"
#include "tests/runtime/cuda/nvrtc_for_tests.h"
#include "tests/runtime/scratch_dir.h"

namespace tiletune::runtime::cuda {
namespace {

// out[i] = a[i] * chain_scalars[0] + m for i < n.
constexpr const char* kFillKernel = R"(#include "tt/kernel_args.h"
extern "C" __global__ void fill(tt_kernel_args args) {
  const long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= args.n) return;
  const float* a = (const float*)args.a;
  ((float*)args.out)[i] = a[i] * args.chain_scalars[0] + (float)args.m;
}
)";

// Writes every field the executor fills back out, to check the layout the
// host and NVRTC agree on.
constexpr const char* kEchoKernel = R"(#include "tt/kernel_args.h"
extern "C" __global__ void echo(tt_kernel_args args) {
  float* out = (float*)args.out;
  out[0] = (float)args.m;
  out[1] = (float)args.n;
  out[2] = (float)args.k;
  out[3] = (float)args.batch;
  out[4] = (float)args.lda;
  out[5] = (float)args.ldb;
  out[6] = (float)args.ldc;
  out[7] = args.eps;
  out[8] = args.chain_scalars[TT_MAX_CHAIN - 1];
  out[9] = args.chain_tensors[1] == args.b ? 1.0f : 0.0f;
  out[10] = args.weight == args.a ? 1.0f : 0.0f;
  out[11] = args.shift == 0 ? 1.0f : 0.0f;
}
)";

// Sums args.k floats of dynamic shared memory set to 1.
constexpr const char* kSharedKernel = R"(#include "tt/kernel_args.h"
extern "C" __global__ void shared_sum(tt_kernel_args args) {
  extern __shared__ float buffer[];
  const int count = (int)args.k;
  for (int i = threadIdx.x; i < count; i += blockDim.x) buffer[i] = 1.0f;
  __syncthreads();
  if (threadIdx.x == 0) {
    float s = 0;
    for (int i = 0; i < count; ++i) s += buffer[i];
    ((float*)args.out)[0] = s;
  }
}
)";

// Writes args.m floats past the output: far outside any allocation.
constexpr const char* kWildKernel = R"(#include "tt/kernel_args.h"
extern "C" __global__ void wild(tt_kernel_args args) { ((float*)args.out)[args.m] = 1.0f; }
)";

std::string ReadFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

class CudaExecutorTest : public ::testing::Test {
 protected:
  void SetUp() override {
    std::string why;
    executor_ = CudaExecutor::Open(&why);
    if (!executor_) GTEST_SKIP() << "no CUDA device here: " << why;
    nvrtc_ = TestNvrtc(&why);
    if (!nvrtc_) GTEST_SKIP() << why;
    const auto driver = CudaDriver::Open(&why);
    ASSERT_TRUE(driver) << why;
    CUdevice device = 0;
    ASSERT_EQ(driver->api().cuDeviceGet(&device, 0), CUDA_SUCCESS);
    const auto fingerprint = ReadCudaFingerprint(*driver, device, &why);
    ASSERT_TRUE(fingerprint) << why;
    arch_ = fingerprint->arch();
  }

  // The CUBIN of `code` for this device, written into the scratch folder.
  std::string Cubin(const std::string& code, const std::string& name) {
    const std::string header =
        ReadFile(std::string(TILETUNE_SOURCE_DIR) + "/kernels/tt/kernel_args.h");
    const RtcOutput out =
        nvrtc_->Compile(code, name + ".cu", {{"tt/kernel_args.h", header}}, {}, arch_);
    EXPECT_TRUE(out.ok) << out.log;
    const std::string path = (dir_.path() / (name + ".cubin")).string();
    std::ofstream(path, std::ios::binary) << out.binary;
    return path;
  }

  DeviceBuffer Upload(const std::vector<float>& values) {
    DeviceBuffer buffer = executor_->Allocate(values.size() * sizeof(float));
    executor_->CopyIn(buffer, values.data(), buffer.bytes);
    return buffer;
  }

  std::vector<float> Download(const DeviceBuffer& buffer) {
    std::vector<float> values(buffer.bytes / sizeof(float));
    executor_->CopyOut(values.data(), buffer, buffer.bytes);
    return values;
  }

  testing::ScratchDir dir_;
  std::unique_ptr<CudaExecutor> executor_;
  NvrtcCompiler* nvrtc_ = nullptr;
  std::string arch_;
};

TEST_F(CudaExecutorTest, CopiesRoundTrip) {
  EXPECT_EQ(executor_->backend(), "cuda");
  std::vector<float> values(1 << 18);
  std::iota(values.begin(), values.end(), 0.5f);
  const DeviceBuffer buffer = Upload(values);
  EXPECT_NE(buffer.ptr, nullptr);
  EXPECT_EQ(Download(buffer), values);
  EXPECT_EQ(executor_->Allocate(0).ptr, nullptr);
  EXPECT_THROW(executor_->CopyIn(buffer, values.data(), buffer.bytes + 4), std::runtime_error);
  executor_->ReleaseAll();
  EXPECT_EQ(Download(Upload({1, 2, 3})), (std::vector<float>{1, 2, 3}));
}

TEST_F(CudaExecutorTest, LaunchesAnNvrtcKernelThatWritesKnownValues) {
  ASSERT_EQ(executor_->Load(Cubin(kFillKernel, "fill"), "fill"), std::nullopt);
  const int n = 100000;
  std::vector<float> a(n);
  std::iota(a.begin(), a.end(), 0.0f);
  KernelArguments args;
  args.a = Upload(a);
  args.out = Upload(std::vector<float>(n, -1.0f));
  args.chain_scalars = {2.0};
  args.m = 7;
  args.n = n;
  args.block = {256, 1, 1};
  args.grid = {(n + 255) / 256, 1, 1};
  ASSERT_EQ(executor_->Launch(args), std::nullopt);
  const std::vector<float> out = Download(args.out);
  for (int i = 0; i < n; ++i) ASSERT_EQ(out[i], 2.0f * i + 7.0f) << i;

  // Timed runs measure the kernel, after a flush of the L2.
  executor_->FlushCaches();
  double seconds = -1;
  ASSERT_EQ(executor_->TimedLaunch(args, &seconds), std::nullopt);
  EXPECT_GT(seconds, 0);
  EXPECT_LT(seconds, 0.1);
}

TEST_F(CudaExecutorTest, PassesEveryArgumentField) {
  ASSERT_EQ(executor_->Load(Cubin(kEchoKernel, "echo"), "echo"), std::nullopt);
  KernelArguments args;
  args.a = Upload({0});
  args.b = Upload({0});
  args.weight = args.a;
  args.out = Upload(std::vector<float>(12, -1.0f));
  args.chain_tensors = std::vector<DeviceBuffer>(TT_MAX_CHAIN);
  args.chain_tensors[1] = args.b;
  args.chain_scalars = std::vector<double>(TT_MAX_CHAIN, 0.0);
  args.chain_scalars.back() = 0.25;
  args.m = 1;
  args.n = 2;
  args.k = 3;
  args.batch = 4;
  args.lda = 5;
  args.ldb = 6;
  args.ldc = 7;
  args.eps = 1e-5;
  ASSERT_EQ(executor_->Launch(args), std::nullopt);
  const std::vector<float> out = Download(args.out);
  EXPECT_EQ(out, (std::vector<float>{1, 2, 3, 4, 5, 6, 7, 1e-5f, 0.25f, 1, 1, 1}));

  args.chain_scalars.push_back(1.0);
  const auto error = executor_->Launch(args);
  ASSERT_TRUE(error);
  EXPECT_NE(error->find("TT_MAX_CHAIN"), std::string::npos) << *error;
}

TEST_F(CudaExecutorTest, OptsInToMoreThan48KiBOfDynamicSharedMemory) {
  ASSERT_EQ(executor_->Load(Cubin(kSharedKernel, "shared_sum"), "shared_sum"), std::nullopt);
  KernelArguments args;
  args.out = Upload({0});
  args.block = {128, 1, 1};
  args.k = 25600;  // floats: 100 KiB
  args.shared_memory_bytes = 25600 * sizeof(float);
  ASSERT_EQ(executor_->Launch(args), std::nullopt);
  EXPECT_EQ(Download(args.out)[0], 25600.0f);
}

TEST_F(CudaExecutorTest, ABadLaunchIsAnErrorAndTheContextStaysUsable) {
  ASSERT_EQ(executor_->Load(Cubin(kFillKernel, "fill"), "fill"), std::nullopt);
  KernelArguments args;
  args.a = Upload({3});
  args.out = Upload({0});
  args.chain_scalars = {1.0};
  args.n = 1;
  args.block = {4096, 1, 1};  // more threads than a block can have
  const auto error = executor_->Launch(args);
  ASSERT_TRUE(error);
  EXPECT_NE(error->find("cuLaunchKernel(fill) failed: CUDA_ERROR_INVALID_VALUE"), std::string::npos)
      << *error;
  args.block = {1, 1, 1};
  ASSERT_EQ(executor_->Launch(args), std::nullopt);
  EXPECT_EQ(Download(args.out)[0], 3.0f);
}

TEST_F(CudaExecutorTest, LoadFailuresSayWhy) {
  const auto missing = executor_->Load((dir_.path() / "missing.cubin").string(), "fill");
  ASSERT_TRUE(missing);
  EXPECT_NE(missing->find("cannot open"), std::string::npos) << *missing;

  const std::string garbage = (dir_.path() / "garbage.cubin").string();
  std::ofstream(garbage) << "not a cubin";
  const auto invalid = executor_->Load(garbage, "fill");
  ASSERT_TRUE(invalid);
  EXPECT_NE(invalid->find("cuModuleLoadData"), std::string::npos) << *invalid;

  const auto no_entry = executor_->Load(Cubin(kFillKernel, "fill"), "no_such_entry");
  ASSERT_TRUE(no_entry);
  EXPECT_NE(no_entry->find("no entry 'no_such_entry'"), std::string::npos) << *no_entry;

  const auto unloaded = executor_->Launch({});
  ASSERT_TRUE(unloaded);
  EXPECT_EQ(*unloaded, "no kernel loaded");
}

// An illegal address poisons the context: the worker must end (exit code 3)
// so that the daemon records a crash and starts a fresh one. The death test
// re-runs this test in a new process (fork + exec), so the CUDA state of
// this one does not leak into it.
TEST_F(CudaExecutorTest, AnIllegalAddressEndsTheProcessWithCode3) {
  GTEST_FLAG_SET(death_test_style, "threadsafe");
  const std::string cubin = Cubin(kWildKernel, "wild");
  EXPECT_EXIT(
      {
        if (executor_->Load(cubin, "wild")) std::exit(1);
        KernelArguments args;
        args.out = executor_->Allocate(sizeof(float));
        args.m = int64_t{1} << 40;
        executor_->Launch(args);
        std::exit(0);
      },
      ::testing::ExitedWithCode(CudaExecutor::kStickyErrorExitCode), "CUDA_ERROR_ILLEGAL_ADDRESS");
}

}  // namespace
}  // namespace tiletune::runtime::cuda
