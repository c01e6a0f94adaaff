#include "runtime/hip/hip_executor.h"

#include <gtest/gtest.h>

#include <numeric>

#include "kernels/core/op_registry.h"
#include "runtime/hip/hip_backend.h"
#include "tests/runtime/hip/hip_test_kernels.h"
#include "tests/runtime/scratch_dir.h"

namespace tiletune::runtime::hip {
namespace {

TEST(HipExecutor, OpeningItWithoutAGpuSaysWhyAndThrowsNothing) {
  std::string why;
  std::unique_ptr<DeviceExecutor> executor;
  ASSERT_NO_THROW(executor = OpenDeviceExecutor("hip", &why));
  if (executor) {
    EXPECT_EQ(executor->backend(), "hip");
  } else {
    EXPECT_TRUE(why.find("hipInit") != std::string::npos ||
                why.find("libamdhip64 not found") != std::string::npos)
        << why;
  }
}

// The rest needs an AMD GPU; without one each test skips with the reason.
class HipExecutorOnGpu : public ::testing::Test {
 protected:
  void SetUp() override {
    std::string why;
    executor_ = HipExecutor::Open(&why);
    if (!executor_) GTEST_SKIP() << "no usable AMD GPU: " << why;
    HipBackend::Options options;
    options.cache_dir = dir_.path() / "cache";
    options.rtc_binary = TILETUNE_BUILD_DIR "/bin/tiletune-rtc";
    backend_ = HipBackend::Open(options, &why);
    ASSERT_TRUE(backend_) << why;
  }

  // Compiles the argument probe for GPU 0 (the executor's device) and loads it.
  void LoadProbe() {
    const CompileResult compiled =
        backend_->Compile(testing::ArgsProbeSource(), backend_->Devices()[0], {});
    ASSERT_TRUE(compiled.ok) << compiled.log;
    EXPECT_EQ(compiled.resources.shared_memory_bytes, 1024);
    const auto error = executor_->Load(compiled.artifact_path, "tt_args_probe");
    ASSERT_FALSE(error) << *error;
  }

  // n elements of a, b and out, with the launch covering them in blocks of 256.
  KernelArguments ProbeArguments(int64_t n, std::vector<float>* a, std::vector<float>* b) {
    a->resize(n);
    b->resize(n);
    std::iota(a->begin(), a->end(), 1.0f);
    std::iota(b->begin(), b->end(), 100.0f);
    KernelArguments args;
    args.op = &kernels::OpSpecOf("rmsnorm");
    for (const char* name : {"x", "w", "y"}) {
      args.tensors[name] = executor_->Allocate(n * sizeof(float));
    }
    executor_->CopyIn(args.tensors.at("x"), a->data(), n * sizeof(float));
    executor_->CopyIn(args.tensors.at("w"), b->data(), n * sizeof(float));
    args.ints = {{"rows", 1}, {"cols", n}, {"ldx", n}, {"ldy", 7}};
    args.chain_scalars = {0.0, 2.0};
    args.floats = {{"eps", 0.5}};
    args.grid = {static_cast<uint32_t>((n + 255) / 256), 1, 1};
    args.block = {256, 1, 1};
    return args;
  }

  testing::ScratchDir dir_;
  std::unique_ptr<HipExecutor> executor_;
  std::unique_ptr<HipBackend> backend_;
};

TEST_F(HipExecutorOnGpu, CopiesMemoryBothWays) {
  std::vector<float> in(1 << 18), out(in.size());
  std::iota(in.begin(), in.end(), 0.0f);
  const DeviceBuffer buffer = executor_->Allocate(in.size() * sizeof(float));
  executor_->CopyIn(buffer, in.data(), in.size() * sizeof(float));
  executor_->CopyOut(out.data(), buffer, out.size() * sizeof(float));
  EXPECT_EQ(out, in);
  executor_->ReleaseAll();
}

TEST_F(HipExecutorOnGpu, PassesTheArgumentsByValueAndTimesTheKernel) {
  LoadProbe();
  std::vector<float> a, b;
  const int64_t n = 1000;
  const KernelArguments args = ProbeArguments(n, &a, &b);
  ASSERT_FALSE(executor_->Launch(args));
  std::vector<float> out(n);
  executor_->CopyOut(out.data(), args.tensors.at("y"), n * sizeof(float));
  for (int64_t i = 0; i < n; ++i) {
    ASSERT_EQ(out[i], a[i] * 2.0f + b[i] + 0.5f + 7.0f) << "element " << i;
  }

  executor_->FlushCaches();
  double seconds = -1;
  ASSERT_FALSE(executor_->TimedLaunch(args, &seconds));
  EXPECT_GT(seconds, 0);
  EXPECT_LT(seconds, 1);
  executor_->Unload();
  executor_->ReleaseAll();
}

TEST_F(HipExecutorOnGpu, ReportsLoadAndLaunchErrors) {
  EXPECT_NE(executor_->Load((dir_.path() / "absent.hsaco").string(), "k")
                .value_or("")
                .find("cannot read"),
            std::string::npos);
  EXPECT_EQ(executor_->Launch({}), std::optional<std::string>("no kernel loaded"));

  const CompileResult compiled =
      backend_->Compile(testing::ArgsProbeSource(), backend_->Devices()[0], {});
  ASSERT_TRUE(compiled.ok) << compiled.log;
  const auto wrong_entry = executor_->Load(compiled.artifact_path, "tt_not_there");
  ASSERT_TRUE(wrong_entry);
  EXPECT_NE(wrong_entry->find("tt_not_there"), std::string::npos) << *wrong_entry;

  LoadProbe();
  std::vector<float> a, b;
  KernelArguments args = ProbeArguments(256, &a, &b);
  args.shared_memory_bytes = 1u << 30;
  const auto too_much = executor_->Launch(args);
  ASSERT_TRUE(too_much);
  EXPECT_NE(too_much->find("shared memory"), std::string::npos) << *too_much;
  executor_->ReleaseAll();
}

}  // namespace
}  // namespace tiletune::runtime::hip
