#include "runtime/backend_registry.h"

#include <gtest/gtest.h>

#include <sched.h>
#include <unistd.h>

#include <algorithm>
#include <thread>

#include "runtime/device_class.h"
#include "runtime/host/cpu_fingerprint.h"
#include "tests/runtime/scratch_dir.h"
#include "tests/support/compiler_without_openblas.h"

namespace tiletune::runtime {
namespace {

const BackendStatus* StatusOf(const DiscoveredBackends& d, const std::string& name) {
  for (const auto& s : d.statuses) {
    if (s.name == name) return &s;
  }
  return nullptr;
}

TEST(BackendRegistry, HostIsAvailableAndGpuBackendsSayWhyNot) {
  testing::ScratchDir dir;
  BackendOptions options;
  options.cache_dir = dir.path().string();
  const DiscoveredBackends d = DiscoverBackends(options);
  ASSERT_EQ(d.statuses.size(), 3u);
  ASSERT_GE(d.backends.size(), 1u);
  EXPECT_EQ(d.backends[0]->name(), "host");
  EXPECT_TRUE(StatusOf(d, "host")->available);
  EXPECT_EQ(StatusOf(d, "host")->reason, "") << "OpenBLAS is installed here";
  for (const char* gpu : {"cuda", "hip"}) {
    const BackendStatus* s = StatusOf(d, gpu);
    ASSERT_TRUE(s) << gpu;
    // Available on a machine with that vendor's GPU (the lent H200); where
    // it is absent (CI: the CUDA toolkit but no driver, Debian's HIP runtime
    // but no AMD GPU) the status says why.
    const bool opened =
        std::ranges::any_of(d.backends, [&](const auto& b) { return b->name() == gpu; });
    EXPECT_EQ(s->available, opened) << gpu;
    if (s->available) continue;
    EXPECT_TRUE(s->reason.find("not found") != std::string::npos ||
                s->reason.find("no AMD GPU found") != std::string::npos)
        << gpu << ": " << s->reason;
  }
}

TEST(BackendRegistry, UnusableHostCompilerAndUnknownNamesAreStatuses) {
  testing::ScratchDir dir;
  BackendOptions options;
  options.enabled = {"host", "tpu"};
  options.cache_dir = dir.path().string();
  options.host_compiler = "tiletune-no-such-compiler";
  const DiscoveredBackends d = DiscoverBackends(options);
  EXPECT_TRUE(d.backends.empty());
  ASSERT_EQ(d.statuses.size(), 2u);
  EXPECT_FALSE(d.statuses[0].available);
  EXPECT_NE(d.statuses[0].reason.find("tiletune-no-such-compiler"), std::string::npos);
  EXPECT_NE(d.statuses[1].reason.find("unknown backend"), std::string::npos);
}

// What an opened backend lacks is its status's reason: the host without
// OpenBLAS (tiletune devices, the daemon's log).
TEST(BackendRegistry, TheHostWithoutOpenBlasIsAvailableAndSaysSo) {
  testing::ScratchDir dir;
  BackendOptions options;
  options.enabled = {"host"};
  options.cache_dir = (dir.path() / "cache").string();
  options.host_compiler = testing::CompilerWithoutOpenBlas(dir.path()).string();
  const DiscoveredBackends d = DiscoverBackends(options);
  ASSERT_EQ(d.backends.size(), 1u);
  ASSERT_EQ(d.statuses.size(), 1u);
  EXPECT_TRUE(d.statuses[0].available);
  EXPECT_NE(d.statuses[0].reason.find("no OpenBLAS"), std::string::npos) << d.statuses[0].reason;
}

// The operator may leave OpenBLAS out of the baseline where it is installed:
// host GEMMs are then measured against host-naive, and the status says why.
TEST(BackendRegistry, TheOpenBlasBaselineCanBeTurnedOff) {
  testing::ScratchDir dir;
  BackendOptions options;
  options.enabled = {"host"};
  options.cache_dir = (dir.path() / "cache").string();
  options.host_openblas = false;
  const DiscoveredBackends d = DiscoverBackends(options);
  ASSERT_EQ(d.backends.size(), 1u);
  EXPECT_TRUE(d.statuses[0].available);
  EXPECT_EQ(d.statuses[0].reason,
            "no OpenBLAS: host_openblas_baseline is false: the host GEMM baseline is host-naive");
  const auto devices = d.backends[0]->Devices();
  ASSERT_EQ(devices.size(), 1u);
  EXPECT_FALSE(devices[0].has_openblas);
  EXPECT_EQ(devices[0].toolchain.runtime_version().find("openblas"), std::string::npos);
}

TEST(CpuFingerprint, DescribesThisMachine) {
  const v1::DeviceFingerprint fp = host::ReadCpuFingerprint();
  EXPECT_EQ(fp.vendor(), "cpu");
  EXPECT_EQ(fp.arch(), host::CpuArch());
#if defined(__x86_64__)
  EXPECT_TRUE(fp.arch() == "x86_64-avx512" || fp.arch() == "x86_64-avx2" ||
              fp.arch() == "x86_64-sse2")
      << fp.arch();
#endif
  EXPECT_FALSE(fp.name().empty());
  EXPECT_EQ(fp.compute_units(), host::UsableCpuCount());
  EXPECT_LE(fp.compute_units(), ::sysconf(_SC_NPROCESSORS_ONLN));
  EXPECT_GT(fp.memory_bytes(), int64_t{64} << 20);
  EXPECT_EQ(fp.device_class(), DeviceClassId(fp));
}

// The CPUs a process may run on (a cpuset, tiletuned's host_cpus) are its
// compute units and so part of its device class.
TEST(CpuFingerprint, CountsOnlyTheCpusThisThreadMayUse) {
  const v1::DeviceFingerprint all = host::ReadCpuFingerprint();
  if (all.compute_units() < 2) GTEST_SKIP() << "needs 2 usable CPUs";
  v1::DeviceFingerprint one;
  std::thread([&] {
    cpu_set_t first;
    CPU_ZERO(&first);
    cpu_set_t allowed;
    ASSERT_EQ(sched_getaffinity(0, sizeof(allowed), &allowed), 0);
    for (int cpu = 0; cpu < CPU_SETSIZE; ++cpu) {
      if (CPU_ISSET(cpu, &allowed)) {
        CPU_SET(cpu, &first);
        break;
      }
    }
    ASSERT_EQ(sched_setaffinity(0, sizeof(first), &first), 0);
    one = host::ReadCpuFingerprint();
  }).join();
  EXPECT_EQ(one.compute_units(), 1);
  EXPECT_NE(one.device_class(), all.device_class());
}

TEST(DeviceClass, DependsOnTheClassFieldsOnly) {
  v1::DeviceFingerprint a;
  a.set_vendor("cpu");
  a.set_arch("x86_64-avx2");
  a.set_name("Some CPU");
  a.set_compute_units(8);
  v1::DeviceFingerprint b = a;
  b.set_memory_bytes(123);
  b.set_clock_mhz(3000);
  EXPECT_EQ(DeviceClassId(a), DeviceClassId(b));
  b.set_compute_units(16);
  EXPECT_NE(DeviceClassId(a), DeviceClassId(b));
  EXPECT_EQ(DeviceClassId(a).size(), 16u);
}

}  // namespace
}  // namespace tiletune::runtime
