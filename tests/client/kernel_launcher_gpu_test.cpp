// KernelLauncher on a CUDA GPU: a CUBIN tuned by the real daemon launched
// into the test's context, cuBLASLt run as the fallback when the daemon is
// down, and, for a VENDOR record, with the algorithm its baseline kept, each
// checked against float64 on an odd shape, and a TMA kernel launched with
// the tensor map the launcher encodes. Skipped without libcuda, a GPU or
// cuBLASLt (the TMA test: without NVRTC or sm_90).
#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <cstring>
#include <iostream>

#include "client/launcher/abi_packing.h"
#include "client/launcher/cuda_kernels.h"
#include "client/launcher/kernel_launcher.h"
#include "kernels/core/abi_description.h"
#include "kernels/source/device_headers.h"
#include "launcher_test_support.h"
#include "loopback_ports.h"
#include "runtime/content_hash.h"
#include "runtime/cuda/cuda_driver_api.h"
#include "runtime/cuda/nvrtc_compiler.h"
#include "tests/support/gemm_test_key.h"
#include "tests/support/tiletuned_process.h"
#include "tests/support/tma_box_copy.h"

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

// Why `daemon` has no cuda:0; nullopt when it has.
std::optional<std::string> NoCudaDevice(testing::TiletunedProcess& daemon) {
  grpc::ClientContext ctx;
  v1::ListDevicesResponse devices;
  if (!daemon.Stub()->ListDevices(&ctx, {}, &devices).ok()) return "ListDevices failed";
  for (const auto& device : devices.devices()) {
    if (device.id() == "cuda:0") return std::nullopt;
  }
  return "the daemon has no cuda:0: " + devices.ShortDebugString();
}

// A daemon on the host and cuda backends deciding by `serve` (a
// launcher_test_support flag set).
std::vector<std::string> DaemonFlags(const std::vector<std::string>& serve) {
  std::vector<std::string> flags = {"--backends", "host,cuda"};
  flags.insert(flags.end(), serve.begin(), serve.end());
  return flags;
}

// A launcher trusting the daemon whose data folder is `dir`, waiting for
// its first answer.
LauncherOptions Trusting(const fs::path& dir) {
  LauncherOptions options;
  options.trusted_keys = {testing::ReadyFileValue(dir / "ready", "signing_key")};
  options.resolve_deadline = 2min;
  return options;
}

TEST_F(CudaLauncherTest, ATunedCubinRunsInTheCallersContext) {
  testing::TempDir dir;
  testing::TiletunedProcess daemon(dir.path(), DaemonFlags(testing::kServeAnyTunedKernel));
  daemon.Start();
  if (auto why = NoCudaDevice(daemon)) GTEST_SKIP() << *why;
  const auto key = testing::BiasReluGemmKey(kM, kN, kK);
  const auto device = testing::DeviceId("cuda:0");
  testing::Tune(*daemon.Stub(), key, device, 11);
  if (HasFatalFailure()) return;

  KernelLauncher launcher(daemon.address(), Trusting(dir.path()));
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

// tests/support/tma_box_copy.cu served as a TMA kernel would be: its map of
// `a` in the launch geometry, the gemm ABI of its key. Launched twice on
// different tensors (the maps hold addresses: they are encoded per launch),
// each copy checked bit for bit with nothing written past c; then what an
// encoding costs.
TEST_F(CudaLauncherTest, ATmaKernelReadsTheTensorMapTheLauncherEncodesAtEachLaunch) {
  const cu::CudaDriverApi& api = driver_->api();
  int major = 0;
  Check(api.cuDeviceGetAttribute(&major, cu::CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR, 0),
        "cuDeviceGetAttribute(COMPUTE_CAPABILITY_MAJOR)");
  int minor = 0;
  Check(api.cuDeviceGetAttribute(&minor, cu::CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR, 0),
        "cuDeviceGetAttribute(COMPUTE_CAPABILITY_MINOR)");
  if (major < 9) GTEST_SKIP() << "tensor maps need sm_90+; this is sm_" << major << minor;
  std::string why;
  const auto nvrtc = cu::NvrtcCompiler::Open(&why);
  if (!nvrtc) GTEST_SKIP() << why;

  constexpr int64_t kRows = 37, kInner = 200, kBatch = 3;  // no side a multiple of the box
  const testing::TmaBoxCopy copy{2, 64, 16, 128};
  const std::string arch = "sm_" + std::to_string(major) + std::to_string(minor);
  const auto compiled = nvrtc->Compile(testing::TmaBoxCopySource(copy), "tma_box_copy.cu",
                                       kernels::DeviceHeaders(), {}, arch);
  ASSERT_TRUE(compiled.ok) << compiled.log;
  const v1::KernelKey key = testing::GemmTestKey(kRows, kInner, kInner, kBatch, v1::DTYPE_BF16,
                                                 v1::DTYPE_BF16, false, false);
  v1::KernelArtifact artifact;
  artifact.set_format(v1::KernelArtifact::FORMAT_CUBIN);
  artifact.set_entry("tma_box_copy");
  artifact.set_target(arch);
  artifact.set_code_bytes(static_cast<int64_t>(compiled.binary.size()));
  artifact.set_content_hash(runtime::ContentHash(compiled.binary));
  *artifact.mutable_abi() = kernels::DescribeLaunchAbi(key, v1::KernelAbi::PASSING_BY_VALUE);
  *artifact.mutable_launch() = testing::TmaBoxCopyLaunch(copy, kRows, kInner, kBatch);
  const auto& launch = artifact.launch();
  ASSERT_EQ(UnlaunchableGeometry(launch), std::nullopt);
  auto planned = cu::PlanTensorMaps(launch.tensor_maps(), launch.argument_bytes(), artifact.abi());
  ASSERT_TRUE(std::holds_alternative<std::vector<cu::PlannedTensorMap>>(planned))
      << std::get<std::string>(planned);
  const auto plan = std::get<std::vector<cu::PlannedTensorMap>>(planned);
  auto cuda = CudaContexts::Process(&why);
  ASSERT_TRUE(cuda) << why;
  const TunedCudaKernel kernel(cuda, artifact, compiled.binary, "the TMA test kernel", nullptr,
                               plan, std::nullopt);

  constexpr size_t kBytes = kBatch * kRows * kInner * 2, kGuardBytes = 4096;
  const auto allocate = [&](size_t bytes, unsigned char fill) {
    cu::CUdeviceptr device = 0;
    EXPECT_EQ(api.cuMemAlloc(&device, bytes), cu::CUDA_SUCCESS);
    EXPECT_EQ(api.cuMemsetD8(device, fill, bytes), cu::CUDA_SUCCESS);
    return device;
  };
  const cu::CUdeviceptr b = allocate(kBatch * kInner * kInner * 2, 0);
  for (const uint16_t seed : {uint16_t{1}, uint16_t{7}}) {
    std::vector<uint16_t> a(kBytes / 2);
    for (size_t i = 0; i < a.size(); ++i) a[i] = static_cast<uint16_t>(i * 40503u + seed) | 1u;
    const cu::CUdeviceptr a_device = allocate(kBytes, 0), c = allocate(kBytes + kGuardBytes, 0xab);
    Check(api.cuMemcpyHtoD(a_device, a.data(), kBytes), "cuMemcpyHtoD");
    LaunchArgs args;
    args.tensors = {{"a", reinterpret_cast<const void*>(a_device)},
                    {"b", reinterpret_cast<const void*>(b)},
                    {"c", reinterpret_cast<const void*>(c)}};
    EXPECT_EQ(kernel.Launch(nullptr, args).runner, Runner::kTuned);
    Check(api.cuCtxSynchronize(), "cuCtxSynchronize");
    std::vector<unsigned char> out(kBytes + kGuardBytes);
    Check(api.cuMemcpyDtoH(out.data(), c, out.size()), "cuMemcpyDtoH");
    EXPECT_EQ(std::memcmp(out.data(), a.data(), kBytes), 0) << "seed " << seed;
    EXPECT_TRUE(std::all_of(out.begin() + kBytes, out.end(), [](unsigned char v) {
      return v == 0xab;
    })) << "written past c";

    // A tensor the map cannot take: nothing runs.
    args.tensors["a"] = reinterpret_cast<const void*>(a_device + 8);
    try {
      kernel.Launch(nullptr, args);
      ADD_FAILURE() << "a misaligned a was launched";
    } catch (const LaunchError& e) {
      EXPECT_EQ(e.field(), "a") << e.what();
    }
    api.cuMemFree(a_device);
    api.cuMemFree(c);
  }
  api.cuMemFree(b);

  // What encoding costs, per map: what a launch adds for each.
  PackedArgs packed(static_cast<size_t>(launch.argument_bytes()));
  const void* any = reinterpret_cast<const void*>(b);
  std::memcpy(packed.data(), &any, sizeof(any));
  ASSERT_FALSE(cu::EncodeTensorMaps(cuda->driver(), plan, packed.data()));
  std::vector<unsigned char> first(
      static_cast<const unsigned char*>(packed.data()),
      static_cast<const unsigned char*>(packed.data()) + packed.size());
  constexpr int kEncodings = 10000;
  const auto start = std::chrono::steady_clock::now();
  for (int i = 0; i < kEncodings; ++i) cu::EncodeTensorMaps(cuda->driver(), plan, packed.data());
  const double micros =
      std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - start).count() /
      kEncodings;
  EXPECT_EQ(std::memcmp(first.data(), packed.data(), first.size()), 0) << "the same map each time";
  RecordProperty("encode_us_per_map", std::to_string(micros));
  std::cout << "cuTensorMapEncodeTiled: " << micros << " us per map\n";
}

TEST_F(CudaLauncherTest, AVendorRecordsFallbackRunsTheAlgorithmItsBaselineKept) {
  testing::TempDir dir;
  testing::TiletunedProcess daemon(dir.path(), DaemonFlags(testing::kServeNoTunedKernel));
  daemon.Start();
  if (auto why = NoCudaDevice(daemon)) GTEST_SKIP() << *why;
  const auto key = testing::BiasReluGemmKey(kM, kN, kK);
  const auto device = testing::DeviceId("cuda:0");
  testing::Tune(*daemon.Stub(), key, device, 11, v1::WINNER_VENDOR);
  if (HasFatalFailure()) return;

  v1::LookupResponse lookup;
  {
    grpc::ClientContext ctx;
    v1::LookupRequest request;
    *request.mutable_key() = key;
    *request.mutable_device() = device;
    ASSERT_TRUE(daemon.Stub()->Lookup(&ctx, request, &lookup).ok());
  }
  ASSERT_TRUE(lookup.has_record()) << lookup.ShortDebugString();
  const v1::Record& record = lookup.record();
  // The daemon's default: up to 8 of the heuristic's algorithms, fused and
  // followed by the pass (bias + relu fits cuBLASLt's epilogue).
  EXPECT_GE(record.baseline_candidates_size(), 2) << record.ShortDebugString();
  ASSERT_TRUE(record.has_baseline_algorithm()) << record.ShortDebugString();
  const std::optional<v1::VendorAlgorithm> expected = FallbackAlgorithmOf(record);
  ASSERT_TRUE(expected) << record.ShortDebugString();

  KernelLauncher launcher(daemon.address(), Trusting(dir.path()));
  const auto handle = launcher.Resolve(key, device);
  ASSERT_EQ(handle->runner(), Runner::kVendorFallback) << handle->reason();
  BiasReluGemm gemm(kM, kN, kK);
  const LaunchOutcome outcome = LaunchOnDevice(*handle, gemm);
  EXPECT_EQ(outcome.runner, Runner::kVendorFallback) << outcome.reason;
  EXPECT_NE(outcome.reason.find("; ran " + expected->description()), std::string::npos)
      << outcome.reason;
  EXPECT_EQ(outcome.reason.find("instead of"), std::string::npos) << outcome.reason;
  EXPECT_LT(gemm.WorstError(), 1e-4);
}

}  // namespace
}  // namespace tiletune::launcher
