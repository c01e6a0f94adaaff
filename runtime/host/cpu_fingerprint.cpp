#include "cpu_fingerprint.h"

#include <sched.h>
#include <sys/utsname.h>
#include <unistd.h>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <optional>

#include "runtime/device_class.h"

namespace tiletune::runtime::host {
namespace {

std::string Trim(std::string s) {
  const auto first = s.find_first_not_of(" \t");
  const auto last = s.find_last_not_of(" \t\r\n");
  return first == std::string::npos ? "" : s.substr(first, last - first + 1);
}

// The value of the first "name : value" line of a /proc file.
std::optional<std::string> ProcField(const std::string& file, const std::string& name) {
  std::ifstream in(file);
  for (std::string line; std::getline(in, line);) {
    const auto colon = line.find(':');
    if (colon != std::string::npos && Trim(line.substr(0, colon)) == name) {
      return Trim(line.substr(colon + 1));
    }
  }
  return std::nullopt;
}

std::string ReadLine(const std::filesystem::path& file) {
  std::ifstream in(file);
  std::string line;
  std::getline(in, line);
  return Trim(line);
}

// The number a text starts with; 0 when it does not start with one.
int64_t LeadingInteger(const std::string& text) {
  try {
    return std::stoll(text);
  } catch (const std::exception&) {
    return 0;
  }
}

// "2048K" / "1M" as written in sysfs cache descriptions.
int64_t ParseCacheSize(const std::string& text) {
  const int64_t value = LeadingInteger(text);
  switch (text.empty() ? ' ' : text.back()) {
    case 'K': return value << 10;
    case 'M': return value << 20;
    case 'G': return value << 30;
    default: return value;
  }
}

int64_t L2Bytes() {
  const std::filesystem::path caches = "/sys/devices/system/cpu/cpu0/cache";
  std::error_code ec;
  for (const auto& index : std::filesystem::directory_iterator(caches, ec)) {
    if (ReadLine(index.path() / "level") == "2" &&
        ReadLine(index.path() / "type") != "Instruction") {
      return ParseCacheSize(ReadLine(index.path() / "size"));
    }
  }
  return 0;
}

}  // namespace

std::string CpuArch() {
  utsname u{};
  ::uname(&u);
  const std::string machine = u.machine;
#if defined(__x86_64__)
  // What the CPU supports is what -march=native turns on.
  if (__builtin_cpu_supports("avx512f")) return machine + "-avx512";
  if (__builtin_cpu_supports("avx2")) return machine + "-avx2";
  return machine + "-sse2";
#else
  return machine;
#endif
}

int UsableCpuCount() {
  cpu_set_t allowed;
  CPU_ZERO(&allowed);
  if (sched_getaffinity(0, sizeof(allowed), &allowed) != 0) {
    return static_cast<int>(::sysconf(_SC_NPROCESSORS_ONLN));
  }
  return CPU_COUNT(&allowed);
}

v1::DeviceFingerprint ReadCpuFingerprint() {
  v1::DeviceFingerprint fp;
  fp.set_vendor("cpu");
  fp.set_arch(CpuArch());
  fp.set_name(ProcField("/proc/cpuinfo", "model name").value_or(fp.arch()));
  fp.set_compute_units(UsableCpuCount());
  if (const auto mem = ProcField("/proc/meminfo", "MemTotal")) {
    fp.set_memory_bytes(LeadingInteger(*mem) * 1024);  // "16318412 kB"
  }
  fp.set_l2_bytes(L2Bytes());
  if (const auto mhz = ProcField("/proc/cpuinfo", "cpu MHz")) {
    try {
      fp.set_clock_mhz(static_cast<int32_t>(std::lround(std::stod(*mhz))));
    } catch (const std::exception&) {
      // Left at 0: the clock is informational and not part of the class.
    }
  }
  fp.set_device_class(DeviceClassId(fp));
  return fp;
}

}  // namespace tiletune::runtime::host
