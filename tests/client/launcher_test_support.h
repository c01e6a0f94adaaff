#pragma once

#include <cstdint>
#include <filesystem>
#include <string>
#include <vector>

#include "client/launcher/kernel_handle.h"
#include "tiletune/v1/tiletune.grpc.pb.h"

namespace tiletune::testing {

// A bias + relu GEMM of the given sizes: operands, a poisoned output and the
// float64 reference, c = relu(a · b + bias), all row-major.
struct BiasReluGemm {
  BiasReluGemm(int64_t m, int64_t n, int64_t k);

  // The launch's arguments for these buffers (host memory, or the device
  // copies a GPU test made of them).
  launcher::LaunchArgs Args(const void* a_at, const void* b_at, const void* bias_at,
                            const void* c_at) const;
  launcher::LaunchArgs HostArgs() { return Args(a.data(), b.data(), bias.data(), c.data()); }
  // The largest |c - reference| / (|reference| + 1).
  double WorstError() const;

  int64_t m, n, k;
  std::vector<float> a, b, bias, c;
};

// The key of that GEMM (f32, chain bias, relu).
v1::KernelKey BiasReluGemmKey(int64_t m, int64_t n, int64_t k);

v1::DeviceSelector DeviceId(const std::string& id);

// A value of tiletuned's ready file (signing_key=...).
std::string ReadyFileValue(const std::filesystem::path& ready_file, const std::string& name);

// Tunes `key` on `device` with the random strategy's `seed` to a record
// that says `winner` (a failure otherwise): run the daemon with
// kServeAnyTunedKernel for TUNED, kServeNoTunedKernel for VENDOR.
void Tune(v1::TuningService::Stub& stub, const v1::KernelKey& key, const v1::DeviceSelector& device,
          uint64_t seed, v1::Winner winner = v1::WINNER_TUNED);

// The daemon flags that make a tuned variant win over the baseline however
// close the race: the tests need a kernel to load, not a fast one.
inline const std::vector<std::string> kServeAnyTunedKernel = {"--min-speedup", "0.01",
                                                              "--noise-factor", "0"};
// The flags that make the vendor baseline win whatever the variants do.
inline const std::vector<std::string> kServeNoTunedKernel = {"--min-speedup", "1000"};

}  // namespace tiletune::testing
