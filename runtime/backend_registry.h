#pragma once

#include <memory>
#include <string>
#include <vector>

#include "runtime/backend.h"

namespace tiletune::runtime {

struct BackendOptions {
  // Which backends to try, in order: host, cuda, hip.
  std::vector<std::string> enabled = {"host", "cuda", "hip"};
  // Compiled-code cache folder (created if missing).
  std::string cache_dir;
  // Largest size of the on-disk compiled-code cache before LRU eviction.
  int64_t cache_max_bytes = int64_t{1} << 30;
  // System compiler for the host backend.
  std::string host_compiler = "c++";
  // The host GEMM baseline is OpenBLAS where the compiler finds it; false
  // leaves it host-naive.
  bool host_openblas = true;
  // tiletune-rtc, the program GPU backends compile device code with: a path,
  // or a name looked up in PATH; empty means "tiletune-rtc" in PATH.
  std::string rtc_binary;
};

struct DiscoveredBackends {
  std::vector<std::unique_ptr<Backend>> backends;  // the ones that opened
  std::vector<BackendStatus> statuses;             // one per enabled name
};

// Opens every enabled backend that this machine supports. A missing vendor
// library is a status with a reason, never an exception; so is what an
// opened backend lacks (the host without OpenBLAS).
DiscoveredBackends DiscoverBackends(const BackendOptions& options);

}  // namespace tiletune::runtime
