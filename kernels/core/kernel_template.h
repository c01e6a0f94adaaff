#pragma once

#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "kernels/core/device_description.h"
#include "kernels/core/search_space.h"
#include "tiletune/v1/kernel_key.pb.h"
#include "tiletune/v1/records.pb.h"

namespace tiletune::kernels {

// A compile option asking the CUDA backend for the arch-specific target of
// its device (sm_90 -> sm_90a: wgmma, setmaxnreg; such a CUBIN runs on that
// compute capability only). tiletune's own: the backend removes it before
// NVRTC sees it.
inline constexpr std::string_view kArchSpecificOption = "--tiletune-arch-specific";

// Everything a backend needs to compile one variant: a self-contained source
// (embedded headers already expanded or passed as `headers`), the symbol to
// call and how it is launched.
struct KernelSource {
  std::string kernel_name;  // template name, e.g. "host_gemm_blocked"
  std::string entry;        // symbol the backend resolves after loading
  std::string code;
  std::vector<std::pair<std::string, std::string>> headers;  // name -> text
  std::vector<std::string> compile_options;
  v1::LaunchGeometry launch;
};

// What a tuned kernel must beat. A compiled source on the host backend (the
// straightforward kernel); a vendor library call (cuBLASLt...) on GPUs, which
// the worker makes itself: `vendor_library` names it, and `source` is then
// empty, or the element-wise pass that computes the key's chain after the
// library's plain product ("cublasLt+gemm_epilogue_pass").
struct Baseline {
  std::string name;
  std::optional<KernelSource> source;
  std::string vendor_library;  // empty for a compiled baseline
  // The vendor call alone computes the whole key (the library's own
  // epilogue takes the chain): beside the call + `source`, it then competes
  // without the pass, named `vendor_library`. (A call without a source runs
  // alone anyway.)
  bool vendor_call_suffices = false;
  // Non-empty where users run a vendor call without us that this baseline
  // does not stand for (why: no such call from the daemon on this backend).
  // A win over such a baseline proves nothing against what they run, so the
  // daemon records the key as the vendor's (tuner/decide_step.cpp).
  std::string vendor_gap;
};

// A family of kernels for one op on one backend: its search space for a key
// on a device, and the source of any point in it.
class KernelTemplate {
 public:
  virtual ~KernelTemplate() = default;
  virtual std::string_view name() const = 0;
  virtual std::string_view backend() const = 0;  // host, cuda, hip
  // Why this template cannot serve the key (dtype, layout...), or nullopt.
  virtual std::optional<std::string> Unsupported(const v1::KernelKey& key) const = 0;
  virtual SearchSpace Space(const v1::KernelKey& key, const DeviceDescription& device) const = 0;
  // The space on this backend's named compile target (tests, benchmarks).
  SearchSpace Space(const v1::KernelKey& key) const {
    return Space(key, CompileTargetOf(backend()));
  }
  virtual KernelSource Source(const v1::KernelKey& key, const Variant& variant) const = 0;
  // The template that searches the key on the device instead of this one
  // where it serves the key with variants there (this one never won such
  // keys), or empty. This one's variants still serve records and verify
  // jobs (KeySpace::Only); a tuning search skips them.
  virtual std::string_view LeavesSearchTo(const v1::KernelKey&, const DeviceDescription&) const {
    return {};
  }
  // The baseline on the device as the daemon describes it (the host GEMM's
  // depends on whether OpenBLAS links there).
  virtual Baseline BaselineFor(const v1::KernelKey& key, const DeviceDescription& device) const = 0;
  // The baseline on this backend's named compile target (tests, benchmarks).
  Baseline BaselineFor(const v1::KernelKey& key) const {
    return BaselineFor(key, CompileTargetOf(backend()));
  }
};

// All templates compiled into this binary.
const std::vector<std::unique_ptr<KernelTemplate>>& AllKernelTemplates();

// Every template of `backend` serving `key`, in catalog order; when none
// does, `why` says why.
std::vector<const KernelTemplate*> ServingKernelTemplates(const v1::KernelKey& key,
                                                          std::string_view backend,
                                                          std::string* why);

// The first of ServingKernelTemplates, or nullptr.
const KernelTemplate* FindKernelTemplate(const v1::KernelKey& key, std::string_view backend,
                                         std::string* why);

}  // namespace tiletune::kernels
