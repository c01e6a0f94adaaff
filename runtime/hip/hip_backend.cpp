#include "runtime/hip/hip_backend.h"

#include <unistd.h>

#include <cstdlib>
#include <cstring>
#include <fstream>
#include <sstream>
#include <stdexcept>

#include "runtime/device_class.h"
#include "runtime/hip/clang_hip_compiler.h"
#include "runtime/hip/code_object_metadata.h"
#include "runtime/hip/hip_compile_plan.h"
#include "runtime/hip/hip_runtime_api.h"
#include "runtime/hip/hiprtc_compiler.h"

namespace tiletune::runtime::hip {
namespace {

namespace fs = std::filesystem;

// Throws the failed call's description; device discovery turns it into the
// backend's reason.
void Check(const HipRuntimeApi& api, const char* call, hipError_t error) {
  if (error != hipSuccess) throw std::runtime_error(api.Describe(call, error));
}

int Attribute(const HipRuntimeApi& api, hipDeviceAttribute_t attribute, const char* name,
              int ordinal) {
  int value = 0;
  Check(api, name, api.hipDeviceGetAttribute(&value, attribute, ordinal));
  return value;
}

// Fingerprint and worker pinning of GPU `ordinal`. The arch is the target
// without its feature flags ("gfx90a" for "gfx90a:sramecc+:xnack-"): kernels
// are compiled for the plain target, which loads whatever the flags.
DeviceInfo DescribeDevice(const HipRuntimeApi& api, int ordinal, const v1::Toolchain& toolchain) {
  const std::string where = "hip:" + std::to_string(ordinal);
  char name[256] = {};
  Check(api, "hipDeviceGetName", api.hipDeviceGetName(name, sizeof name - 1, ordinal));
  hipDeviceProp_tR0000 properties{};
  Check(api, "hipGetDeviceProperties", api.hipGetDevicePropertiesR0000(&properties, ordinal));
  const std::string target(properties.gcnArchName,
                           strnlen(properties.gcnArchName, sizeof properties.gcnArchName));
  const std::string arch = target.substr(0, target.find(':'));
  const auto wavefront = DefaultWavefrontSize(arch);
  if (!wavefront) {
    throw std::runtime_error(where + ": unrecognised gcnArchName '" + target + "'");
  }
  const int warp_size =
      Attribute(api, hipDeviceAttributeWarpSize, "hipDeviceGetAttribute(WarpSize)", ordinal);
  if (warp_size != *wavefront) {
    throw std::runtime_error(where + " (" + arch + ") reports wave size " +
                             std::to_string(warp_size) + ", but kernels for " + arch +
                             " are compiled for " + std::to_string(*wavefront));
  }
  size_t memory = 0;
  Check(api, "hipDeviceTotalMem", api.hipDeviceTotalMem(&memory, ordinal));

  DeviceInfo device;
  device.id = where;
  device.backend = "hip";
  v1::DeviceFingerprint& fp = device.fingerprint;
  fp.set_vendor("amd");
  fp.set_arch(arch);
  fp.set_name(name);
  fp.set_compute_units(Attribute(api, hipDeviceAttributeMultiprocessorCount,
                                 "hipDeviceGetAttribute(MultiprocessorCount)", ordinal));
  fp.set_memory_bytes(static_cast<int64_t>(memory));
  fp.set_l2_bytes(
      Attribute(api, hipDeviceAttributeL2CacheSize, "hipDeviceGetAttribute(L2CacheSize)", ordinal));
  fp.set_clock_mhz(
      Attribute(api, hipDeviceAttributeClockRate, "hipDeviceGetAttribute(ClockRate)", ordinal) /
      1000);
  fp.set_max_shared_bytes_per_block(Attribute(api, hipDeviceAttributeMaxSharedMemoryPerBlock,
                                              "hipDeviceGetAttribute(MaxSharedMemoryPerBlock)",
                                              ordinal));
  fp.set_device_class(DeviceClassId(fp));
  device.toolchain = toolchain;
  device.worker_env["HIP_VISIBLE_DEVICES"] =
      WorkerVisibleDevice(ordinal, std::getenv("HIP_VISIBLE_DEVICES"));
  return device;
}

// Versions shared by every device, or the call that failed.
v1::Toolchain ReadToolchain(const HipRuntimeApi& api, const std::string& hiprtc_version) {
  int driver = 0, runtime = 0;
  Check(api, "hipDriverGetVersion", api.hipDriverGetVersion(&driver));
  Check(api, "hipRuntimeGetVersion", api.hipRuntimeGetVersion(&runtime));
  v1::Toolchain toolchain;
  toolchain.set_driver_version("HIP driver " + HipVersionString(driver));
  toolchain.set_runtime_version("HIP " + HipVersionString(runtime) + " (" + api.library.file + ")");
  toolchain.set_compiler_version(hiprtc_version);
  toolchain.set_kernel_library_version(TILETUNE_KERNEL_LIBRARY_VERSION);
  return toolchain;
}

// The number of GPUs, or why there are none. hipInit fails on a machine
// without one (hipErrorInvalidDevice on ROCm 5.2): it is reported alongside.
int CountDevices(const HipRuntimeApi& api, std::string* why) {
  const hipError_t init = api.hipInit(0);
  int count = 0;
  const hipError_t counted = api.hipGetDeviceCount(&count);
  if (counted == hipSuccess && count > 0) {
    if (init == hipSuccess) return count;
    *why = api.library.name + " opened, " + api.Describe("hipInit", init);
    return 0;
  }
  *why = "no AMD GPU found (" + api.library.name + " opened; " +
         (counted != hipSuccess ? api.Describe("hipGetDeviceCount", counted)
                                : std::string("hipGetDeviceCount: 0 devices")) +
         (init != hipSuccess ? "; " + api.Describe("hipInit", init) : "") + ")";
  return 0;
}

std::string ReadFile(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream s;
  s << in.rdbuf();
  if (!in) throw std::runtime_error("cannot read " + path.string());
  return s.str();
}

// Which compiler serves which CDNA target on this machine, with its
// version or why there is none: "gfx90a by hiprtc 5.2 (...); gfx942,
// gfx950 by clang 22.1.8 (...)".
std::string CompilersByArch() {
  std::string hiprtc_why, clang_why;
  const auto hiprtc = HiprtcCompiler::Open(&hiprtc_why);
  const auto clang = ClangHipCompiler::Open(&clang_why);
  std::string clang_archs;
  for (const auto& arch : ClangHipCompiler::Archs()) {
    clang_archs += (clang_archs.empty() ? "" : ", ") + arch;
  }
  return "gfx90a by " + (hiprtc ? hiprtc->version() : "no compiler: " + hiprtc_why) + "; " +
         clang_archs + " by " + (clang ? clang->version() : "no compiler: " + clang_why);
}

}  // namespace

std::unique_ptr<HipBackend> HipBackend::Open(const Options& options, std::string* why) {
  // Without a GPU the backend does not open; the machine still compiles and
  // checks HIP kernels (tests, tiletune-rtc), and the reason says with what.
  const auto api = OpenHipRuntimeApi(why);
  if (!api) *why = "no AMD GPU found (" + *why + ")";
  const int count = api ? CountDevices(*api, why) : 0;
  if (count == 0) {
    *why = "compile-only: " + *why + "; kernels compile for " + CompilersByArch();
    return nullptr;
  }
  const auto hiprtc = HiprtcCompiler::Open(why);
  if (!hiprtc) return nullptr;
  // Without clang only the gfx942/gfx950 compiles fail, saying why.
  std::string no_clang;
  const auto clang = ClangHipCompiler::Open(&no_clang);
  const std::string clang_version = clang ? clang->version() : "";
  // A bare name is looked up in PATH when a compile runs it.
  if (options.rtc_binary.find('/') != std::string::npos &&
      ::access(options.rtc_binary.c_str(), X_OK) != 0) {
    *why = "device compiler program " + options.rtc_binary + " is missing or not executable";
    return nullptr;
  }
  std::vector<DeviceInfo> devices;
  try {
    v1::Toolchain toolchain = ReadToolchain(*api, hiprtc->version());
    for (int ordinal = 0; ordinal < count; ++ordinal) {
      devices.push_back(DescribeDevice(*api, ordinal, toolchain));
      // The record names the compiler that builds this device's kernels.
      if (HipDeviceCompilerFor(devices.back().fingerprint.arch()) == "clang") {
        devices.back().toolchain.set_compiler_version(clang ? clang_version : no_clang);
      }
    }
  } catch (const std::runtime_error& e) {
    *why = e.what();
    return nullptr;
  }
  try {
    return std::unique_ptr<HipBackend>(
        new HipBackend(options, hiprtc->version(), clang_version, no_clang, std::move(devices)));
  } catch (const fs::filesystem_error& e) {
    *why = "compiled-code cache " + options.cache_dir.string() + ": " + e.what();
    return nullptr;
  }
}

HipBackend::HipBackend(Options options, std::string hiprtc_version, std::string clang_version,
                       std::string no_clang, std::vector<DeviceInfo> devices)
    : options_(std::move(options)),
      hiprtc_version_(std::move(hiprtc_version)),
      clang_version_(std::move(clang_version)),
      no_clang_(std::move(no_clang)),
      devices_(std::move(devices)),
      cache_(options_.cache_dir, options_.cache_max_bytes, ".hsaco") {}

CompileResult HipBackend::Compile(const kernels::KernelSource& source, const DeviceInfo& device,
                                  const CompileLimits& limits) {
  const std::string& arch = device.fingerprint.arch();
  if (const auto unsupported = UnsupportedHipArch(arch)) {
    CompileResult failed;
    failed.log = device.id + ": " + *unsupported;
    return failed;
  }
  const bool by_clang = HipDeviceCompilerFor(arch) == "clang";
  if (by_clang && clang_version_.empty()) {
    CompileResult failed;
    failed.log = device.id + ": cannot compile for " + arch + ": " + no_clang_;
    return failed;
  }
  HipCompilePlan plan;
  try {
    plan = PlanHipCompile(source, arch, by_clang ? clang_version_ : hiprtc_version_,
                          options_.rtc_binary);
  } catch (const std::invalid_argument& e) {
    CompileResult failed;
    failed.log = device.id + ": " + e.what();
    return failed;
  }
  CompileResult result = CompileThroughCache(cache_, plan.cache_key, source, plan.command, limits);
  result.target = device.fingerprint.arch();
  result.options = source.compile_options;
  if (!result.ok) return result;
  // The resource report comes from the code object itself, so a cache hit
  // has one too; a code object without the entry fails here rather than in
  // the worker.
  try {
    result.resources =
        ToResourceReport(ReadKernelMetadata(ReadFile(result.artifact_path), source.entry));
  } catch (const std::runtime_error& e) {
    result.ok = false;
    result.log +=
        std::string(result.log.empty() ? "" : "\n") + result.artifact_path + ": " + e.what();
  }
  return result;
}

std::string WorkerVisibleDevice(int ordinal, const char* inherited) {
  if (!inherited || !*inherited) return std::to_string(ordinal);
  std::stringstream list(inherited);
  std::string entry;
  for (int i = 0; std::getline(list, entry, ','); ++i) {
    if (i == ordinal) return entry;
  }
  return std::to_string(ordinal);
}

}  // namespace tiletune::runtime::hip
