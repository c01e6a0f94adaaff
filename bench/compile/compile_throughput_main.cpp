// tiletune-bench-compile: how many kernel variants per second a backend's
// compile path turns out, cold (empty compiled-code cache) and warm (every
// variant cached), with the same thread count the daemon's compile pool uses.
// Device compiles need no GPU: NVRTC and hipRTC run here.
//
//   tiletune-bench-compile --backend cuda --arch sm_90 --threads 2 [--json]
#include <unistd.h>
#include <CLI/CLI.hpp>

#include <atomic>
#include <chrono>
#include <filesystem>
#include <functional>
#include <iostream>
#include <thread>

#include <fmt/format.h>

#include "kernels/core/kernel_key.h"
#include "kernels/core/kernel_template.h"
#include "runtime/cuda/cubin_compiler.h"
#include "runtime/hip/hip_compile_plan.h"
#include "runtime/host/host_backend.h"
#include "runtime/rtc/rtc_compiler.h"

namespace fs = std::filesystem;
using namespace tiletune;

namespace {

using CompileFn = std::function<runtime::CompileResult(const kernels::KernelSource&)>;

v1::KernelKey Key(const std::string& op, v1::DType dtype,
                  std::vector<std::pair<const char*, int64_t>> dims,
                  std::vector<const char*> chain = {}) {
  v1::KernelKey key;
  key.set_op(op);
  key.set_input_dtype(dtype);
  for (auto [name, size] : dims) {
    auto* d = key.add_shape();
    d->set_name(name);
    d->set_size(size);
  }
  for (const char* c : chain) key.add_chain()->set_op(c);
  return kernels::NormalizeKernelKey(key);
}

// Every valid variant of every template of `backend` for the issue's shapes.
std::vector<kernels::KernelSource> AllVariants(const std::string& backend) {
  const v1::DType f32 = v1::DTYPE_F32, bf16 = v1::DTYPE_BF16;
  const std::vector<v1::KernelKey> keys = {
      Key("softmax", f32, {{"rows", 16384}, {"cols", 4096}}),
      Key("rmsnorm", f32, {{"rows", 16384}, {"cols", 4096}}),
      Key("layernorm", f32, {{"rows", 16384}, {"cols", 4096}}),
      Key("gemm", f32, {{"m", 1024}, {"n", 1024}, {"k", 1024}}, {"bias", "gelu_tanh"}),
      Key("gemm", bf16, {{"m", 4096}, {"n", 4096}, {"k", 4096}}, {"bias", "gelu_tanh"}),
  };
  std::vector<kernels::KernelSource> out;
  for (const auto& t : kernels::AllKernelTemplates()) {
    if (t->backend() != backend) continue;
    for (const auto& key : keys) {
      if (t->Unsupported(key)) continue;
      for (const auto& v : t->Space(key).ValidVariants()) out.push_back(t->Source(key, v));
    }
  }
  return out;
}

struct Pass {
  double seconds = 0;
  int compiled = 0;
  int failed = 0;
  int cache_hits = 0;
};

Pass CompileAll(const std::vector<kernels::KernelSource>& sources, const CompileFn& compile,
                int threads) {
  std::atomic<size_t> next{0};
  std::atomic<int> failed{0}, hits{0};
  const auto start = std::chrono::steady_clock::now();
  std::vector<std::thread> pool;
  for (int i = 0; i < threads; ++i) {
    pool.emplace_back([&] {
      for (size_t j; (j = next++) < sources.size();) {
        const auto result = compile(sources[j]);
        if (!result.ok) ++failed;
        if (result.cache_hit) ++hits;
      }
    });
  }
  for (auto& t : pool) t.join();
  Pass pass;
  pass.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  pass.compiled = static_cast<int>(sources.size());
  pass.failed = failed;
  pass.cache_hits = hits;
  return pass;
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"Compile throughput of a backend's compile path, cold and warm cache"};
  std::string backend = "cuda", arch, rtc_binary;
  int threads = 2;
  bool json = false;
  app.add_option("--backend", backend, "host, cuda or hip")
      ->check(CLI::IsMember({"host", "cuda", "hip"}));
  app.add_option("--arch", arch, "target (sm_90, gfx90a); default per backend");
  app.add_option("--threads", threads, "parallel compiles (the daemon's compile_threads)")
      ->check(CLI::Range(1, 256));
  app.add_option("--rtc-binary", rtc_binary, "tiletune-rtc (default: beside this program)");
  app.add_flag("--json", json, "one JSON object on stdout");
  CLI11_PARSE(app, argc, argv);

  const fs::path self = fs::read_symlink("/proc/self/exe").parent_path();
  if (rtc_binary.empty()) rtc_binary = self / "tiletune-rtc";
  const fs::path cache =
      fs::temp_directory_path() / ("tiletune-bench-compile-" + std::to_string(getpid()));
  fs::remove_all(cache);
  runtime::CompileLimits limits{120};

  CompileFn compile;
  std::string compiler;
  std::unique_ptr<runtime::cuda::CubinCompiler> cubins;
  std::unique_ptr<runtime::CompiledCodeCache> hsaco;
  std::unique_ptr<runtime::host::HostBackend> host;
  std::string why;
  if (backend == "cuda") {
    if (arch.empty()) arch = "sm_90";
    auto nvrtc = runtime::OpenNvrtc(&why);
    if (!nvrtc) {
      std::cerr << "tiletune-bench-compile: " << why << "\n";
      return 1;
    }
    compiler = nvrtc->version();
    cubins = std::make_unique<runtime::cuda::CubinCompiler>(
        runtime::cuda::CubinCompiler::Options{cache, int64_t{1} << 34, rtc_binary}, compiler);
    compile = [&](const kernels::KernelSource& s) { return cubins->Compile(s, arch, limits); };
  } else if (backend == "hip") {
    if (arch.empty()) arch = "gfx90a";
    auto hiprtc = runtime::OpenHiprtc(&why);
    if (!hiprtc) {
      std::cerr << "tiletune-bench-compile: " << why << "\n";
      return 1;
    }
    compiler = hiprtc->version();
    hsaco = std::make_unique<runtime::CompiledCodeCache>(cache, int64_t{1} << 34);
    compile = [&](const kernels::KernelSource& s) {
      const auto plan = runtime::hip::PlanHipCompile(s, arch, compiler, rtc_binary);
      return runtime::CompileThroughCache(*hsaco, plan.cache_key, s, plan.command, limits);
    };
  } else {
    host = runtime::host::HostBackend::Open({"c++", cache, int64_t{1} << 34}, &why);
    if (!host) {
      std::cerr << "tiletune-bench-compile: " << why << "\n";
      return 1;
    }
    const auto device = host->Devices().front();
    arch = device.fingerprint.arch();
    compiler = device.toolchain.compiler_version();
    compile = [&, device](const kernels::KernelSource& s) {
      return host->Compile(s, device, limits);
    };
  }

  const auto sources = AllVariants(backend);
  if (sources.empty()) {
    std::cerr << "tiletune-bench-compile: no variants for backend " << backend << "\n";
    return 1;
  }
  const Pass cold = CompileAll(sources, compile, threads);
  const Pass warm = CompileAll(sources, compile, threads);
  fs::remove_all(cache);

  const double cold_rate = cold.compiled / cold.seconds, warm_rate = warm.compiled / warm.seconds;
  if (json) {
    std::cout << fmt::format(
        R"({{"backend":"{}","arch":"{}","compiler":"{}","threads":{},"variants":{},)"
        R"("cold":{{"seconds":{:.3f},"variants_per_second":{:.2f},"failed":{},"cache_hits":{}}},)"
        R"("warm":{{"seconds":{:.4f},"variants_per_second":{:.1f},"failed":{},"cache_hits":{}}}}})"
        "\n",
        backend, arch, compiler, threads, sources.size(), cold.seconds, cold_rate, cold.failed,
        cold.cache_hits, warm.seconds, warm_rate, warm.failed, warm.cache_hits);
  } else {
    std::cout << fmt::format("{} ({}, {}), {} variants, {} threads\n", backend, arch, compiler,
                             sources.size(), threads)
              << fmt::format("  cold: {:8.2f} s  {:8.2f} variants/s  ({} failed)\n", cold.seconds,
                             cold_rate, cold.failed)
              << fmt::format("  warm: {:8.4f} s  {:8.1f} variants/s  ({} cache hits)\n",
                             warm.seconds, warm_rate, warm.cache_hits);
  }
  return cold.failed == 0 && warm.cache_hits == warm.compiled ? 0 : 1;
}
