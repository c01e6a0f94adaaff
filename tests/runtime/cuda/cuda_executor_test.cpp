// GPU-only: every test here skips, naming the reason, where libcuda, a
// device or NVRTC is missing.
#include "runtime/cuda/cuda_executor.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <fstream>
#include <numeric>
#include <vector>

#include "kernels/core/op_registry.h"
#include "kernels/source/device_headers.h"
#include "kernels/tt/kernel_args.h"
#include "runtime/cuda/cuda_fingerprint.h"
#include "tests/runtime/cuda/nvrtc_for_tests.h"
#include "tests/runtime/scratch_dir.h"
#include "tests/support/gemm_call.h"
#include "tests/support/gemm_test_key.h"
#include "tests/support/tma_box_copy.h"

namespace tiletune::runtime::cuda {
namespace {

// c[i] = a[i] * chain.scalars[0] + m for i < n.
constexpr const char* kFillKernel = R"(#include "ops/gemm/gemm_args.h"
extern "C" __global__ void fill(tt_gemm_args args) {
  const long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= args.n) return;
  const float* a = (const float*)args.a;
  ((float*)args.c)[i] = a[i] * args.chain.scalars[0] + (float)args.m;
}
)";

// Writes every field of the gemm struct back out, to check that what the
// executor packs is what the kernel reads.
constexpr const char* kEchoKernel = R"(#include "ops/gemm/gemm_args.h"
extern "C" __global__ void echo(tt_gemm_args args) {
  float* out = (float*)args.c;
  out[0] = (float)args.m;
  out[1] = (float)args.n;
  out[2] = (float)args.k;
  out[3] = (float)args.batch;
  out[4] = (float)args.lda;
  out[5] = (float)args.ldb;
  out[6] = (float)args.ldc;
  out[7] = args.chain.scalars[TT_MAX_CHAIN - 1];
  out[8] = args.chain.tensors[1] == args.b ? 1.0f : 0.0f;
  out[9] = args.chain.tensors[0] == 0 ? 1.0f : 0.0f;
  out[10] = args.a != args.b ? 1.0f : 0.0f;
}
)";

// Sums args.k floats of dynamic shared memory set to 1.
constexpr const char* kSharedKernel = R"(#include "ops/gemm/gemm_args.h"
extern "C" __global__ void shared_sum(tt_gemm_args args) {
  extern __shared__ float buffer[];
  const int count = (int)args.k;
  for (int i = threadIdx.x; i < count; i += blockDim.x) buffer[i] = 1.0f;
  __syncthreads();
  if (threadIdx.x == 0) {
    float s = 0;
    for (int i = 0; i < count; ++i) s += buffer[i];
    ((float*)args.c)[0] = s;
  }
}
)";

// Writes args.m floats past the output: far outside any allocation.
constexpr const char* kWildKernel = R"(#include "ops/gemm/gemm_args.h"
extern "C" __global__ void wild(tt_gemm_args args) { ((float*)args.c)[args.m] = 1.0f; }
)";

// A kernel writing, for every op, sizeof, alignof and each field's offset of
// its launch ABI struct as NVRTC lays it out, in LaunchAbi order.
std::string LayoutKernel() {
  std::string includes, body;
  int i = 0;
  for (const kernels::OpSpec* op : kernels::AllOpSpecs()) {
    const std::string type(op->abi.struct_name);
    includes += "#include \"" + std::string(op->abi.header) + "\"\n";
    body += "  out[" + std::to_string(i++) + "] = sizeof(" + type + ");\n";
    body += "  out[" + std::to_string(i++) + "] = alignof(" + type + ");\n";
    for (const kernels::AbiField& f : op->abi.fields) {
      body += "  out[" + std::to_string(i++) + "] = offsetof(" + type + ", " + std::string(f.name) +
              ");\n";
    }
  }
  // NVRTC has no <cstddef> and no __builtin_offsetof: the classic spelling.
  return includes + "#define offsetof(t, f) ((long long)&((t*)0)->f)\n" +
         "extern \"C\" __global__ void layout(tt_gemm_args args) {\n"
         "  long long* out = (long long*)args.c;\n" +
         body + "}\n";
}

// `elements` distinct bit patterns of `bytes` each, none zero: what a copy
// must reproduce bit for bit.
std::vector<std::byte> BitPatterns(size_t elements, size_t bytes) {
  std::vector<std::byte> out(elements * bytes);
  for (size_t i = 0; i < elements; ++i) {
    const uint32_t bits = static_cast<uint32_t>(i * 2654435761u % 0xfff0u + 1) | (i << 16);
    std::memcpy(out.data() + i * bytes, &bits, bytes);
  }
  return out;
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
    const RtcOutput out = nvrtc_->Compile(code, name + ".cu", kernels::DeviceHeaders(), {}, arch_);
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
  KernelArguments args =
      testing::GemmCall(Upload(a), Upload({0}), Upload(std::vector<float>(n, -1.0f)));
  args.chain_scalars = {2.0};
  args.ints["m"] = 7;
  args.ints["n"] = n;
  args.block = {256, 1, 1};
  args.grid = {(n + 255) / 256, 1, 1};
  ASSERT_EQ(executor_->Launch(args), std::nullopt);
  const std::vector<float> out = Download(args.tensors.at("c"));
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
  const DeviceBuffer b = Upload({0});
  KernelArguments args = testing::GemmCall(Upload({0}), b, Upload(std::vector<float>(11, -1.0f)));
  args.chain_tensors = std::vector<DeviceBuffer>(TT_MAX_CHAIN);
  args.chain_tensors[1] = b;
  args.chain_scalars = std::vector<double>(TT_MAX_CHAIN, 0.0);
  args.chain_scalars.back() = 0.25;
  int64_t value = 1;
  for (const char* field : {"m", "n", "k", "batch", "lda", "ldb", "ldc"})
    args.ints[field] = value++;
  ASSERT_EQ(executor_->Launch(args), std::nullopt);
  const std::vector<float> out = Download(args.tensors.at("c"));
  EXPECT_EQ(out, (std::vector<float>{1, 2, 3, 4, 5, 6, 7, 0.25f, 1, 1, 1}));

  args.chain_scalars.push_back(1.0);
  const auto error = executor_->Launch(args);
  ASSERT_TRUE(error);
  EXPECT_NE(error->find("TT_MAX_CHAIN"), std::string::npos) << *error;
}

TEST_F(CudaExecutorTest, NvrtcLaysOutEveryOpsArgumentStructAsItsLaunchAbiSays) {
  ASSERT_EQ(executor_->Load(Cubin(LayoutKernel(), "layout"), "layout"), std::nullopt);
  std::vector<long long> expected;
  for (const kernels::OpSpec* op : kernels::AllOpSpecs()) {
    expected.push_back(static_cast<long long>(op->abi.size));
    expected.push_back(static_cast<long long>(op->abi.alignment));
    for (const kernels::AbiField& f : op->abi.fields) {
      expected.push_back(static_cast<long long>(f.offset));
    }
  }
  const DeviceBuffer out = executor_->Allocate(expected.size() * sizeof(long long));
  ASSERT_EQ(executor_->Launch(testing::GemmCall({}, {}, out)), std::nullopt);
  std::vector<long long> seen(expected.size());
  executor_->CopyOut(seen.data(), out, out.bytes);
  EXPECT_EQ(seen, expected);
}

TEST_F(CudaExecutorTest, OptsInToMoreThan48KiBOfDynamicSharedMemory) {
  ASSERT_EQ(executor_->Load(Cubin(kSharedKernel, "shared_sum"), "shared_sum"), std::nullopt);
  KernelArguments args = testing::GemmCall({}, {}, Upload({0}));
  args.block = {128, 1, 1};
  args.ints["k"] = 25600;  // floats: 100 KiB
  args.shared_memory_bytes = 25600 * sizeof(float);
  ASSERT_EQ(executor_->Launch(args), std::nullopt);
  EXPECT_EQ(Download(args.tensors.at("c"))[0], 25600.0f);
}

TEST_F(CudaExecutorTest, ABadLaunchIsAnErrorAndTheContextStaysUsable) {
  ASSERT_EQ(executor_->Load(Cubin(kFillKernel, "fill"), "fill"), std::nullopt);
  KernelArguments args = testing::GemmCall(Upload({3}), {}, Upload({0}));
  args.chain_scalars = {1.0};
  args.ints["n"] = 1;
  args.block = {4096, 1, 1};  // more threads than a block can have
  const auto error = executor_->Launch(args);
  ASSERT_TRUE(error);
  EXPECT_NE(error->find("cuLaunchKernel(fill) failed: CUDA_ERROR_INVALID_VALUE"), std::string::npos)
      << *error;
  args.block = {1, 1, 1};
  ASSERT_EQ(executor_->Launch(args), std::nullopt);
  EXPECT_EQ(Download(args.tensors.at("c"))[0], 3.0f);
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

// The TMA test kernel (tests/support/tma_box_copy.cu) reading `a` through
// the map the executor encodes from the launch geometry: a box copy of a
// batched tensor whose sides are no multiple of the box, for each element
// type and swizzle, checked bit for bit with nothing written past c.
TEST_F(CudaExecutorTest, ATmaKernelReadsTheTensorMapTheExecutorEncodes) {
  if (std::stoi(arch_.substr(3)) < 90) GTEST_SKIP() << "tensor maps need sm_90+; this is " << arch_;
  constexpr int64_t kM = 37, kK = 200, kBatch = 3;
  constexpr size_t kGuardBytes = 4096;
  struct Case {
    testing::TmaBoxCopy copy;
    v1::DType dtype;
  };
  for (const Case& c : {Case{{2, 64, 16, 128}, v1::DTYPE_BF16}, Case{{2, 16, 8, 32}, v1::DTYPE_F16},
                        Case{{4, 16, 8, 64}, v1::DTYPE_F32}, Case{{4, 32, 16, 128}, v1::DTYPE_F32},
                        Case{{2, 24, 5, 0}, v1::DTYPE_BF16}}) {
    const std::string name = "tma_box_copy_" + std::to_string(c.copy.element_bytes) + "_" +
                             std::to_string(c.copy.box_inner) + "x" +
                             std::to_string(c.copy.box_rows) + "_" +
                             std::to_string(c.copy.swizzle_bytes);
    SCOPED_TRACE(name);
    ASSERT_EQ(executor_->Load(Cubin(testing::TmaBoxCopySource(c.copy), name), "tma_box_copy"),
              std::nullopt);
    const size_t bytes = static_cast<size_t>(c.copy.element_bytes);
    const std::vector<std::byte> a = BitPatterns(kBatch * kM * kK, bytes);
    const std::vector<std::byte> poison(a.size() + kGuardBytes, std::byte{0xab});
    KernelArguments args = testing::GemmCall(executor_->Allocate(a.size()),
                                             executor_->Allocate(kBatch * kK * kK * bytes),
                                             executor_->Allocate(poison.size()));
    executor_->CopyIn(args.tensors.at("a"), a.data(), a.size());
    executor_->CopyIn(args.tensors.at("c"), poison.data(), poison.size());
    args.key = testing::GemmTestKey(kM, kK, kK, kBatch, c.dtype, c.dtype, false, false);
    args.ints = {{"m", kM},     {"n", kK},   {"k", kK},  {"batch", kBatch},
                 {"lda", kK}, {"ldb", kK}, {"ldc", kK}};
    SetLaunchGeometry(testing::TmaBoxCopyLaunch(c.copy, kM, kK, kBatch),
                      executor_->compute_units(), args);
    ASSERT_EQ(args.tensor_maps.size(), 1);
    ASSERT_EQ(executor_->Launch(args), std::nullopt);
    std::vector<std::byte> c_out(poison.size());
    executor_->CopyOut(c_out.data(), args.tensors.at("c"), c_out.size());
    const auto differs = std::mismatch(a.begin(), a.end(), c_out.begin());
    EXPECT_EQ(differs.first, a.end()) << "c differs from a from element "
                                      << (differs.first - a.begin()) / bytes;
    EXPECT_TRUE(std::all_of(c_out.begin() + a.size(), c_out.end(),
                            [](std::byte b) { return b == std::byte{0xab}; }))
        << "written past c";
    // The worker times it the same way.
    double seconds = -1;
    ASSERT_EQ(executor_->TimedLaunch(args, &seconds), std::nullopt);
    EXPECT_GT(seconds, 0);

    // A tensor a map cannot take is refused before anything runs.
    KernelArguments misaligned = args;
    misaligned.tensors["a"].ptr = static_cast<std::byte*>(misaligned.tensors["a"].ptr) + 8;
    const auto error = executor_->Launch(misaligned);
    ASSERT_TRUE(error);
    EXPECT_NE(error->find("tma_box_copy: a: address "), std::string::npos) << *error;
    EXPECT_NE(error->find(" is not aligned to 16 bytes, as a tensor map's must be"),
              std::string::npos)
        << *error;
    executor_->ReleaseAll();
  }
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
        KernelArguments args = testing::GemmCall({}, {}, executor_->Allocate(sizeof(float)));
        args.ints["m"] = int64_t{1} << 40;
        executor_->Launch(args);
        std::exit(0);
      },
      ::testing::ExitedWithCode(CudaExecutor::kStickyErrorExitCode), "CUDA_ERROR_ILLEGAL_ADDRESS");
}

}  // namespace
}  // namespace tiletune::runtime::cuda
