// Asks a running tiletuned what it has (ListDevices) and which kernel to run
// for one GEMM (Lookup), through the installed client library; then runs the
// kernel the daemon tuned for relu(a·b + bias), f32 1x512x512 (decode), on its host
// device, through the installed launcher, and checks it against float64.
// Exits 0 only when the daemon itself answered both, has a device, and the
// GEMM's result is right.
//   tiletune-client-example [ADDRESS [SIGNING_KEY]]   (default 127.0.0.1:7733)
// SIGNING_KEY is the daemon's (signing_key= in its ready file); without it no
// served kernel is trusted and this program's own GEMM runs instead. Tune the
// key first, e.g. with `tiletune submit` (tests/install/install_and_run.sh).
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <iostream>
#include <random>
#include <string>
#include <vector>

#include <grpcpp/client_context.h>

#include "client/key_text.h"
#include "client/launcher/kernel_launcher.h"
#include "client/tiletune_client.h"
#include "ops/gemm/gemm_args.h"
#include "tiletune/v1/tiletune.grpc.pb.h"

namespace v1 = tiletune::v1;
using tiletune::client::AnswerSource;
using tiletune::launcher::Runner;

v1::KernelKey F32Gemm(const std::string& shape) {
  v1::KernelKey key;
  key.set_op("gemm");
  key.set_input_dtype(v1::DTYPE_F32);
  key.set_output_dtype(v1::DTYPE_F32);
  for (const v1::Dim& dim : tiletune::client::ParseShapeText(shape, "shape")) {
    *key.add_shape() = dim;
  }
  return key;
}

// relu(a·b + bias), row-major, accumulated in T: the float64 reference, and
// in float this program's own GEMM, for when the launcher has none to run.
template <typename T>
std::vector<T> BiasReluGemm(const std::vector<float>& a, const std::vector<float>& b,
                            const std::vector<float>& bias, int64_t m, int64_t n, int64_t k) {
  std::vector<T> c(m * n);
  for (int64_t i = 0; i < m; ++i) {
    for (int64_t j = 0; j < n; ++j) {
      T sum = bias[j];
      for (int64_t q = 0; q < k; ++q) sum += T(a[i * k + q]) * T(b[q * n + j]);
      c[i * n + j] = std::max(sum, T(0));
    }
  }
  return c;
}

// The tuned GEMM through the launcher: true when its result is right.
bool RunGemm(const std::string& address, const std::string& signing_key) {
  constexpr int64_t m = 1, n = 512, k = 512;
  v1::KernelKey key = F32Gemm("m=1,n=512,k=512");
  for (const v1::ChainOp& op : tiletune::client::ParseChainText("bias,relu", "chain")) {
    *key.add_chain() = op;
  }

  tiletune::launcher::LauncherOptions options;
  if (!signing_key.empty()) options.trusted_keys = {signing_key};
  options.allow_host_code = true;  // a host kernel is a shared object run in this process
  // A one-shot program waits for the fetch; a server keeps the short
  // default and calls Prefetch when it loads its model.
  options.resolve_deadline = std::chrono::seconds(30);
  tiletune::launcher::KernelLauncher launcher(address, options);
  v1::DeviceSelector cpu;
  cpu.set_device("cpu:0");
  const auto handle = launcher.Resolve(key, cpu);

  std::mt19937 rng(7);
  std::uniform_real_distribution<float> uniform(-1, 1);
  std::vector<float> a(m * k), b(k * n), bias(n);
  for (std::vector<float>* operand : {&a, &b, &bias}) {
    for (float& x : *operand) x = uniform(rng);
  }
  std::vector<float> c(m * n, std::nanf(""));  // an element left unwritten is wrong
  tiletune::launcher::LaunchArgs args;
  args.tensors = {{"a", a.data()}, {"b", b.data()}, {"c", c.data()}};
  args.chain_tensors = {{0, bias.data()}};  // chain slot 0 is bias; relu takes nothing
  const tiletune::launcher::LaunchOutcome outcome = handle->Launch(nullptr, args);
  if (outcome.runner == Runner::kNotHandled) c = BiasReluGemm<float>(a, b, bias, m, n, k);
  std::cout << "launch " << tiletune::client::KeyText(key) << ": "
            << (outcome.runner == Runner::kTuned ? "tuned" : "fallback") << " (" << outcome.reason
            << ")\n";

  const std::vector<double> want = BiasReluGemm<double>(a, b, bias, m, n, k);
  size_t wrong = 0;
  for (size_t i = 0; i < c.size(); ++i) {
    // Written so that NaN counts as wrong.
    if (!(std::abs(c[i] - want[i]) <= 1e-4 * (std::abs(want[i]) + 1))) ++wrong;
  }
  if (wrong > 0) {
    std::cerr << "launch: " << wrong << " of " << c.size() << " elements wrong\n";
    return false;
  }
  return true;
}

int main(int argc, char** argv) {
  const std::string address = argc > 1 ? argv[1] : "127.0.0.1:7733";
  const std::string signing_key = argc > 2 ? argv[2] : "";
  constexpr auto kDeadline = std::chrono::seconds(10);

  auto stub = v1::TuningService::NewStub(tiletune::client::MakeChannel(address));
  grpc::ClientContext context;
  context.set_deadline(std::chrono::system_clock::now() + kDeadline);
  v1::ListDevicesResponse devices;
  const grpc::Status listed = stub->ListDevices(&context, v1::ListDevicesRequest(), &devices);
  if (!listed.ok()) {
    std::cerr << "ListDevices: " << listed.error_message() << "\n";
    return 1;
  }
  for (const v1::Device& device : devices.devices()) {
    std::cout << "device " << device.id() << " backend=" << device.backend() << "\n";
  }
  if (devices.devices().empty()) {
    std::cerr << "ListDevices: the daemon has no device\n";
    return 1;
  }

  const v1::KernelKey key = F32Gemm("m=64,n=32,k=16");
  tiletune::client::TiletuneClient client(address, {.deadline = kDeadline});
  const tiletune::client::LookupAnswer answer = client.Lookup(key);
  if (answer.source != AnswerSource::kDaemon) {
    std::cerr << "Lookup not answered by the daemon: " << answer.status.error_message() << "\n";
    return 1;
  }
  std::cout << "lookup " << tiletune::client::KeyText(key) << ": "
            << v1::LookupResponse::Result_Name(answer.response.result())
            << " fallback=" << answer.response.fallback().library() << "\n";
  // A HIT's kernel is launched with this struct (docs/kernel-abi.md); the
  // launcher below fills it from the kernel's served ABI.
  std::cout << "launch ABI tt_gemm_args: " << sizeof(tt_gemm_args) << " bytes\n";

  return RunGemm(address, signing_key) ? 0 : 1;
}
