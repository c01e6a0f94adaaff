#include "runtime/cuda/cuda_backend.h"

#include <dlfcn.h>
#include <gtest/gtest.h>

#include <cstdlib>
#include <optional>

#include "runtime/backend_registry.h"
#include "runtime/cuda/cuda_driver_api.h"
#include "runtime/device_class.h"
#include "runtime/device_executor.h"
#include "tests/runtime/scratch_dir.h"

namespace tiletune::runtime::cuda {
namespace {

// Whether libcuda loads here, and the loader's message when it does not.
struct DriverPresence {
  bool present = false;
  std::string loader_error;
};

DriverPresence ProbeDriver() {
  if (void* handle = ::dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL)) {
    ::dlclose(handle);
    return {true, ""};
  }
  const char* error = ::dlerror();
  return {false, error ? error : ""};
}

// Sets (or, with nullopt, unsets) an environment variable for one scope.
class ScopedEnv {
 public:
  ScopedEnv(const char* name, std::optional<std::string> value) : name_(name) {
    if (const char* old = std::getenv(name)) old_ = old;
    Set(value);
  }
  ~ScopedEnv() { Set(old_); }
  ScopedEnv(const ScopedEnv&) = delete;
  ScopedEnv& operator=(const ScopedEnv&) = delete;

 private:
  void Set(const std::optional<std::string>& value) {
    if (value) {
      ::setenv(name_, value->c_str(), 1);
    } else {
      ::unsetenv(name_);
    }
  }
  const char* name_;
  std::optional<std::string> old_;
};

TEST(CudaDriverVersionName, ReadsTheDriverApiNumber) {
  EXPECT_EQ(CudaDriverVersionName(13000), "cuda driver 13.0");
  EXPECT_EQ(CudaDriverVersionName(12040), "cuda driver 12.4");
  EXPECT_EQ(CudaDriverVersionName(12080), "cuda driver 12.8");
}

TEST(WorkerVisibleDevice, CountsWithinThisProcesssOwnVisibleDevices) {
  {
    ScopedEnv env("CUDA_VISIBLE_DEVICES", std::nullopt);
    EXPECT_EQ(WorkerVisibleDevice(0), "0");
    EXPECT_EQ(WorkerVisibleDevice(3), "3");
  }
  {
    ScopedEnv env("CUDA_VISIBLE_DEVICES", "3,5,GPU-8c1d");
    EXPECT_EQ(WorkerVisibleDevice(0), "3");
    EXPECT_EQ(WorkerVisibleDevice(1), "5");
    EXPECT_EQ(WorkerVisibleDevice(2), "GPU-8c1d");
  }
}

TEST(CudaDriver, OpensOrSaysWhatTheLoaderSaid) {
  const DriverPresence driver = ProbeDriver();
  std::string why;
  const auto opened = CudaDriver::Open(&why);
  if (driver.present) {
    ASSERT_TRUE(opened) << why;
    EXPECT_EQ(opened->ErrorName(CUDA_ERROR_NO_DEVICE), "CUDA_ERROR_NO_DEVICE");
    EXPECT_NE(opened->Describe(CUDA_ERROR_ILLEGAL_ADDRESS, "cuLaunchKernel(k)")
                  .find("cuLaunchKernel(k) failed: CUDA_ERROR_ILLEGAL_ADDRESS"),
              std::string::npos);
    return;
  }
  EXPECT_FALSE(opened);
  EXPECT_NE(why.find(driver.loader_error), std::string::npos) << why;
  EXPECT_NE(why.find("libcuda.so"), std::string::npos) << why;
}

TEST(CudaDriver, StickyErrorsAreTheOnesThatPoisonTheContext) {
  for (const CUresult sticky :
       {CUDA_ERROR_ILLEGAL_ADDRESS, CUDA_ERROR_LAUNCH_FAILED, CUDA_ERROR_MISALIGNED_ADDRESS,
        CUDA_ERROR_ILLEGAL_INSTRUCTION, CUDA_ERROR_HARDWARE_STACK_ERROR}) {
    EXPECT_TRUE(CudaDriver::IsSticky(sticky)) << sticky;
  }
  for (const CUresult recoverable : {CUDA_SUCCESS, CUDA_ERROR_OUT_OF_MEMORY, CUDA_ERROR_NO_DEVICE,
                                     701 /* CUDA_ERROR_LAUNCH_OUT_OF_RESOURCES */}) {
    EXPECT_FALSE(CudaDriver::IsSticky(recoverable)) << recoverable;
  }
}

// Here (no GPU): a status with the loader's reason, no exception. On a GPU
// machine: one device per GPU, described in full.
TEST(CudaDiscovery, ReportsTheBackendOrWhyItIsAbsent) {
  const DriverPresence driver = ProbeDriver();
  testing::ScratchDir dir;
  BackendOptions options;
  options.enabled = {"cuda"};
  options.cache_dir = dir.path().string();
  const DiscoveredBackends d = DiscoverBackends(options);
  ASSERT_EQ(d.statuses.size(), 1u);
  EXPECT_EQ(d.statuses[0].name, "cuda");
  if (!driver.present) {
    EXPECT_FALSE(d.statuses[0].available);
    EXPECT_TRUE(d.backends.empty());
    EXPECT_NE(d.statuses[0].reason.find("driver library not found"), std::string::npos)
        << d.statuses[0].reason;
    EXPECT_NE(d.statuses[0].reason.find(driver.loader_error), std::string::npos)
        << d.statuses[0].reason;
    return;
  }
  if (!d.statuses[0].available) GTEST_SKIP() << "libcuda present: " << d.statuses[0].reason;
  ASSERT_EQ(d.backends.size(), 1u);
  const auto devices = d.backends[0]->Devices();
  ASSERT_FALSE(devices.empty());
  for (size_t i = 0; i < devices.size(); ++i) {
    const DeviceInfo& device = devices[i];
    EXPECT_EQ(device.id, "cuda:" + std::to_string(i));
    EXPECT_EQ(device.backend, "cuda");
    EXPECT_EQ(device.fingerprint.vendor(), "nvidia");
    EXPECT_TRUE(device.fingerprint.arch().starts_with("sm_")) << device.fingerprint.arch();
    EXPECT_FALSE(device.fingerprint.name().empty());
    EXPECT_GT(device.fingerprint.compute_units(), 0);
    EXPECT_GT(device.fingerprint.memory_bytes(), int64_t{1} << 30);
    EXPECT_GT(device.fingerprint.l2_bytes(), 0);
    EXPECT_EQ(device.fingerprint.device_class(), DeviceClassId(device.fingerprint));
    EXPECT_TRUE(device.toolchain.driver_version().starts_with("cuda driver "))
        << device.toolchain.driver_version();
    EXPECT_TRUE(device.toolchain.compiler_version().starts_with("nvrtc "));
    EXPECT_EQ(device.toolchain.kernel_library_version(), TILETUNE_KERNEL_LIBRARY_VERSION);
    EXPECT_EQ(device.worker_env.at("CUDA_VISIBLE_DEVICES"), WorkerVisibleDevice(int(i)));
  }
}

TEST(CudaDiscovery, ExecutorIsAbsentWithTheReasonWhereTheDriverIs) {
  const DriverPresence driver = ProbeDriver();
  if (driver.present) GTEST_SKIP() << "libcuda is present: CudaExecutor tests cover it";
  std::string why;
  EXPECT_EQ(OpenDeviceExecutor("cuda", &why), nullptr);
  EXPECT_NE(why.find(driver.loader_error), std::string::npos) << why;
}

}  // namespace
}  // namespace tiletune::runtime::cuda
