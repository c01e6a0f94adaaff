// KernelLauncher on a CUDA GPU: a CUBIN tuned by the real daemon launched
// into the test's context, and cuBLASLt run as the fallback when the daemon
// is down, each checked against float64 on an odd shape. Skipped without
// libcuda, a GPU or cuBLASLt.
#include <gtest/gtest.h>

#include "client/launcher/kernel_launcher.h"
#include "launcher_test_support.h"
#include "loopback_ports.h"
#include "runtime/cuda/cuda_driver_api.h"
#include "tests/support/tiletuned_process.h"

namespace tiletune::launcher {
namespace {

namespace cu = runtime::cuda;
namespace fs = std::filesystem;
using namespace std::chrono_literals;
using testing::BiasReluGemm;

constexpr int64_t kM = 131, kN = 77, kK = 45;

class CudaLauncherTest : public ::testing::Test {
 protected:
  void SetUp() override {
    std::string why;
    driver_ = cu::CudaDriver::Open(&why);
    if (!driver_) GTEST_SKIP() << "no CUDA driver: " << why;
    const cu::CudaDriverApi& api = driver_->api();
    int devices = 0;
    if (const auto r = api.cuInit(0); r != cu::CUDA_SUCCESS) {
      GTEST_SKIP() << driver_->Describe(r, "cuInit");
    }
    if (api.cuDeviceGetCount(&devices) != cu::CUDA_SUCCESS || devices == 0) {
      GTEST_SKIP() << "no CUDA device";
    }
    Check(api.cuDevicePrimaryCtxRetain(&context_, 0), "cuDevicePrimaryCtxRetain");
    Check(api.cuCtxSetCurrent(context_), "cuCtxSetCurrent");
  }
  void TearDown() override {
    if (!context_) return;
    driver_->api().cuCtxSetCurrent(nullptr);
    driver_->api().cuDevicePrimaryCtxRelease(0);
  }

  void Check(cu::CUresult result, const char* call) {
    ASSERT_EQ(result, cu::CUDA_SUCCESS) << driver_->Describe(result, call);
  }

  // Copies the problem to the device, launches `handle` on the legacy
  // default stream, and copies c back.
  LaunchOutcome LaunchOnDevice(const KernelHandle& handle, BiasReluGemm& gemm) {
    const cu::CudaDriverApi& api = driver_->api();
    const auto upload = [&](const std::vector<float>& host) {
      cu::CUdeviceptr device = 0;
      EXPECT_EQ(api.cuMemAlloc(&device, host.size() * sizeof(float)), cu::CUDA_SUCCESS);
      EXPECT_EQ(api.cuMemcpyHtoD(device, host.data(), host.size() * sizeof(float)),
                cu::CUDA_SUCCESS);
      return device;
    };
    const cu::CUdeviceptr a = upload(gemm.a), b = upload(gemm.b), bias = upload(gemm.bias),
                          c = upload(gemm.c);  // poisoned
    const auto at = [](cu::CUdeviceptr p) { return reinterpret_cast<const void*>(p); };
    const LaunchOutcome outcome = handle.Launch(nullptr, gemm.Args(at(a), at(b), at(bias), at(c)));
    EXPECT_EQ(api.cuCtxSynchronize(), cu::CUDA_SUCCESS);
    EXPECT_EQ(api.cuMemcpyDtoH(gemm.c.data(), c, gemm.c.size() * sizeof(float)), cu::CUDA_SUCCESS);
    for (cu::CUdeviceptr p : {a, b, bias, c}) api.cuMemFree(p);
    return outcome;
  }

  std::unique_ptr<cu::CudaDriver> driver_;
  cu::CUcontext context_ = nullptr;
};

TEST_F(CudaLauncherTest, CublasLtRunsTheKeyWhenTheDaemonIsDown) {
  testing::LoopbackPort port(testing::LoopbackPort::Mode::kRefusing);
  LauncherOptions options;
  options.resolve_deadline = 10s;  // for the refusal, not the time cuBLASLt takes to open
  KernelLauncher launcher(port.address(), options);
  const auto handle =
      launcher.Resolve(testing::BiasReluGemmKey(kM, kN, kK), testing::DeviceId("cuda:0"));
  if (handle->reason().find("cuBLASLt is not available") != std::string::npos) {
    GTEST_SKIP() << handle->reason();
  }
  ASSERT_EQ(handle->runner(), Runner::kVendorFallback) << handle->reason();
  EXPECT_NE(handle->reason().find("tiletuned unavailable at " + port.address()), std::string::npos)
      << handle->reason();
  BiasReluGemm gemm(kM, kN, kK);
  const LaunchOutcome outcome = LaunchOnDevice(*handle, gemm);
  EXPECT_EQ(outcome.runner, Runner::kVendorFallback) << outcome.reason;
  EXPECT_LT(gemm.WorstError(), 1e-4);
}

TEST_F(CudaLauncherTest, ATunedCubinRunsInTheCallersContext) {
  testing::TempDir dir;
  std::vector<std::string> flags = {"--backends", "host,cuda"};
  flags.insert(flags.end(), testing::kServeAnyTunedKernel.begin(),
               testing::kServeAnyTunedKernel.end());
  testing::TiletunedProcess daemon(dir.path(), flags);
  daemon.Start();
  {
    grpc::ClientContext ctx;
    v1::ListDevicesResponse devices;
    ASSERT_TRUE(daemon.Stub()->ListDevices(&ctx, {}, &devices).ok());
    bool has_cuda = false;
    for (const auto& device : devices.devices()) has_cuda |= device.id() == "cuda:0";
    if (!has_cuda) GTEST_SKIP() << "the daemon has no cuda:0: " << devices.ShortDebugString();
  }
  const auto key = testing::BiasReluGemmKey(kM, kN, kK);
  const auto device = testing::DeviceId("cuda:0");
  testing::Tune(*daemon.Stub(), key, device, 11);
  if (HasFatalFailure()) return;

  LauncherOptions options;
  options.trusted_keys = {testing::ReadyFileValue(dir.path() / "ready", "signing_key")};
  options.resolve_deadline = 2min;
  KernelLauncher launcher(daemon.address(), options);
  const auto handle = launcher.Resolve(key, device);
  ASSERT_EQ(handle->runner(), Runner::kTuned) << handle->reason();
  BiasReluGemm gemm(kM, kN, kK);
  const LaunchOutcome outcome = LaunchOnDevice(*handle, gemm);
  EXPECT_EQ(outcome.runner, Runner::kTuned) << outcome.reason;
  EXPECT_LT(gemm.WorstError(), 1e-4);

  // Refused launches leave the output alone: a misaligned tensor.
  BiasReluGemm misaligned(kM, kN, kK);
  LaunchArgs args = misaligned.HostArgs();
  args.tensors["a"] = reinterpret_cast<const char*>(args.tensors["a"]) + 4;
  EXPECT_THROW(handle->Launch(nullptr, args), LaunchError);
}

}  // namespace
}  // namespace tiletune::launcher
