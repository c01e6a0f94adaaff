#pragma once

// Helpers for tests that compile real host kernels and run them through the
// real tiletune-worker.

#include <gtest/gtest.h>

#include <filesystem>
#include <string>
#include <utility>
#include <vector>

#include "kernels/core/kernel_template.h"
#include "runtime/host/host_backend.h"
#include "tests/support/test_key.h"
#include "tiletune/worker/v1/worker.pb.h"
#include "tuner/benchmark_worker.h"

namespace tiletune::testing {

inline std::string WorkerBinary() {
  return std::string(TILETUNE_BUILD_DIR) + "/bin/tiletune-worker";
}

// One backend per test process over a cache in the build folder: ctest runs
// each test in its own process, and a kernel compiled once is a cache hit in
// every later test and run.
inline runtime::host::HostBackend& TestBackend() {
  static std::unique_ptr<runtime::host::HostBackend> backend = [] {
    std::string why;
    auto b = runtime::host::HostBackend::Open(
        {"c++", std::filesystem::path(TILETUNE_BUILD_DIR) / "test-cache" / "host-kernels",
         int64_t{256} << 20},
        &why);
    if (!b) throw std::runtime_error("host backend: " + why);
    return b;
  }();
  return *backend;
}

inline v1::KernelKey MakeKey(const std::string& op,
                             const std::vector<std::pair<std::string, int64_t>>& dims,
                             const std::vector<std::string>& chain = {}) {
  v1::KernelKey key = TestKey(op, dims, chain);
  for (auto& c : *key.mutable_chain()) {
    if (c.op() == "scale") c.set_scalar(0.75);
  }
  return key;
}

inline const kernels::KernelTemplate& HostTemplate(const v1::KernelKey& key) {
  std::string why;
  const kernels::KernelTemplate* t = kernels::FindKernelTemplate(key, "host", &why);
  if (!t) throw std::runtime_error(why);
  return *t;
}

// A compiled kernel as a ready request: fast protocol, tight tolerance.
inline worker::v1::BenchRequest CompileRequest(const v1::KernelKey& key,
                                               const kernels::KernelSource& source) {
  runtime::host::HostBackend& backend = TestBackend();
  const runtime::CompileResult compiled = backend.Compile(source, backend.Devices()[0], {});
  EXPECT_TRUE(compiled.ok) << source.kernel_name << ":\n" << compiled.log << "\n" << source.code;
  worker::v1::BenchRequest request;
  request.set_backend("host");
  request.set_artifact_path(compiled.artifact_path);
  request.set_entry(source.entry);
  *request.mutable_key() = key;
  request.set_seed(1234);
  request.mutable_protocol()->set_warmup(1);
  request.mutable_protocol()->set_min_repetitions(3);
  request.mutable_protocol()->set_max_repetitions(20);
  request.mutable_protocol()->set_min_seconds(0.001);
  request.set_tolerance(1e-5);
  return request;
}

}  // namespace tiletune::testing
