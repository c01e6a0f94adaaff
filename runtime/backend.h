#pragma once

#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "kernels/core/kernel_template.h"
#include "runtime/subprocess.h"
#include "tiletune/v1/records.pb.h"

namespace tiletune::runtime {

// One device a backend drives. `worker_env` pins a benchmark worker to it
// (CUDA_VISIBLE_DEVICES, HIP_VISIBLE_DEVICES...).
struct DeviceInfo {
  std::string id;  // "cpu:0", "cuda:0"
  std::string backend;
  v1::DeviceFingerprint fingerprint;
  v1::Toolchain toolchain;
  std::map<std::string, std::string> worker_env;
  // Host: the compiler links OpenBLAS (the GEMM baseline).
  bool has_openblas = false;
};

struct CompileLimits {
  double timeout_seconds = 60;
  // Of the compiler processes: compiles take every core while a job tunes,
  // and the daemon's own threads (lookups) must still get them at once.
  CpuPriority priority;
};

// Resource usage the compiler reported; GPU backends fill it, the host
// backend leaves it empty.
struct ResourceReport {
  int registers = 0;
  int64_t shared_memory_bytes = 0;
  int64_t spill_bytes = 0;
  int64_t stack_bytes = 0;
};

struct CompileResult {
  bool ok = false;
  bool timed_out = false;
  bool cache_hit = false;
  std::string artifact_path;         // what the worker loads
  std::string cache_key;             // hash of source, options, compiler, target
  std::string target;                // what it was built for: sm_90a, gfx90a, the CPU's arch
  std::vector<std::string> options;  // the compiler options beyond the target
  std::string log;                   // compiler output (errors on failure)
  double seconds = 0;
  ResourceReport resources;
};

// A way to build and run kernels on one kind of device. The daemon holds
// one per available backend; compiles happen in the daemon (in subprocesses
// where the compiler can hang), runs happen in the benchmark worker.
class Backend {
 public:
  virtual ~Backend() = default;
  virtual std::string_view name() const = 0;
  virtual std::vector<DeviceInfo> Devices() const = 0;
  // Thread-safe: the tuner compiles several variants at once.
  virtual CompileResult Compile(const kernels::KernelSource& source, const DeviceInfo& device,
                                const CompileLimits& limits) = 0;
  // True when kernels run on the cores the compiler uses (the host backend):
  // a compile during a timed run would skew it, so the tuner must not overlap
  // the two.
  virtual bool RunsOnCompilerCores() const { return false; }
  // Why this backend's worker cannot call the vendor library `library`
  // (a baseline without a compiled source, kernels::Baseline), or nullopt
  // when it can. By default it calls none.
  virtual std::optional<std::string> VendorLibraryMissing(std::string_view library) const {
    return "backend " + std::string(name()) + " calls no vendor library (asked for " +
           std::string(library) + ")";
  }
};

// Whether a backend could be opened here, and if not, why not.
struct BackendStatus {
  std::string name;
  bool available = false;
  std::string reason;
};

}  // namespace tiletune::runtime
