#include "runtime/hip/hip_backend.h"

#include <dlfcn.h>
#include <gtest/gtest.h>

#include "runtime/backend_registry.h"
#include "tests/runtime/scratch_dir.h"

namespace tiletune::runtime::hip {
namespace {

namespace fs = std::filesystem;

bool HipLibraryLoads() {
  for (const char* name : {"libamdhip64.so.6", "libamdhip64.so.5", "libamdhip64.so"}) {
    if (void* handle = ::dlopen(name, RTLD_NOW | RTLD_LOCAL)) {
      ::dlclose(handle);
      return true;
    }
  }
  return false;
}

// /dev/kfd is the AMD GPU compute device node: without it there is no GPU
// HIP could use.
bool AmdGpuPresent() {
  return fs::exists("/dev/kfd");
}

// Discovery never throws: it reports the GPUs, or exactly why there are none.
TEST(HipBackend, DiscoveryReportsTheGpusOrWhyThereAreNone) {
  testing::ScratchDir dir;
  BackendOptions options;
  options.enabled = {"hip"};
  options.cache_dir = dir.path().string();
  options.rtc_binary = TILETUNE_BUILD_DIR "/bin/tiletune-rtc";
  DiscoveredBackends d;
  ASSERT_NO_THROW(d = DiscoverBackends(options));
  ASSERT_EQ(d.statuses.size(), 1u);
  const BackendStatus& status = d.statuses[0];
  EXPECT_EQ(status.name, "hip");

  // Without a GPU the machine compiles only, and says with which compiler
  // for which CDNA target (CI installs hipRTC and clang-22).
  if (!HipLibraryLoads() || !AmdGpuPresent()) {
    EXPECT_FALSE(status.available);
    EXPECT_TRUE(d.backends.empty());
    EXPECT_TRUE(status.reason.starts_with("compile-only: no AMD GPU found (")) << status.reason;
    EXPECT_NE(status.reason.find(HipLibraryLoads() ? " opened; hipGetDeviceCount: hipErrorNoDevice"
                                                   : "(libamdhip64 not found: "),
              std::string::npos)
        << status.reason;
    EXPECT_NE(status.reason.find("; kernels compile for gfx90a by hiprtc "), std::string::npos)
        << status.reason;
    EXPECT_NE(status.reason.find("; gfx942, gfx950 by clang 22."), std::string::npos)
        << status.reason;
    return;
  }
  ASSERT_TRUE(status.available) << status.reason;
  ASSERT_EQ(d.backends.size(), 1u);
  const auto devices = d.backends[0]->Devices();
  ASSERT_FALSE(devices.empty());
  for (size_t i = 0; i < devices.size(); ++i) {
    const DeviceInfo& device = devices[i];
    EXPECT_EQ(device.id, "hip:" + std::to_string(i));
    EXPECT_EQ(device.backend, "hip");
    EXPECT_EQ(device.fingerprint.vendor(), "amd");
    EXPECT_EQ(device.fingerprint.arch().rfind("gfx", 0), 0u) << device.fingerprint.arch();
    EXPECT_EQ(device.fingerprint.arch().find(':'), std::string::npos);
    EXPECT_FALSE(device.fingerprint.name().empty());
    EXPECT_GT(device.fingerprint.compute_units(), 0);
    EXPECT_GT(device.fingerprint.memory_bytes(), 0);
    EXPECT_GT(device.fingerprint.l2_bytes(), 0);
    EXPECT_EQ(device.fingerprint.device_class().size(), 16u);
    EXPECT_EQ(device.toolchain.compiler_version().rfind("hiprtc ", 0), 0u);
    EXPECT_EQ(device.toolchain.kernel_library_version(), TILETUNE_KERNEL_LIBRARY_VERSION);
    EXPECT_EQ(device.worker_env.count("HIP_VISIBLE_DEVICES"), 1u);
  }
}

TEST(HipBackend, OpenWithoutAGpuSaysWhyAndThrowsNothing) {
  if (AmdGpuPresent()) GTEST_SKIP() << "an AMD GPU is present; the device case is tested above";
  testing::ScratchDir dir;
  std::string why;
  HipBackend::Options options;
  options.cache_dir = dir.path() / "cache";
  EXPECT_EQ(HipBackend::Open(options, &why), nullptr);
  EXPECT_FALSE(why.empty());
  EXPECT_FALSE(fs::exists(dir.path() / "cache"))
      << "no cache folder for a backend that is not there";
}

TEST(WorkerVisibleDevice, IsTheOrdinalOrItsEntryInTheInheritedList) {
  EXPECT_EQ(WorkerVisibleDevice(0, nullptr), "0");
  EXPECT_EQ(WorkerVisibleDevice(3, ""), "3");
  // This process sees GPUs 4 and 6 as 0 and 1; its workers must name them.
  EXPECT_EQ(WorkerVisibleDevice(0, "4,6"), "4");
  EXPECT_EQ(WorkerVisibleDevice(1, "4,6"), "6");
  EXPECT_EQ(WorkerVisibleDevice(0, "GPU-8a3f2c1d"), "GPU-8a3f2c1d");
}

}  // namespace
}  // namespace tiletune::runtime::hip
