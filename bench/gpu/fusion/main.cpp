// tiletune-bench-fusion: tiletune's memory-bound kernels on one NVIDIA GPU
// (issue 6), in one process with one timing protocol. First a copy kernel
// measures the memory's speed; then each case's fused kernel (from the
// fusion planner) is tuned and reported as bandwidth and as a fraction of
// the copy's, and where the graph has several ops, the unfused sequence (each
// op its own tuned kernel, times summed) is tuned too and the speedup of
// fusion printed. Each kernel is tuned by the daemon's tuner (a
// TuningSession with the tiletune-worker process, over its whole space); the
// variant it chose (its winner, or with VENDOR the fastest it measured) is
// then timed in this process.
//
//   tiletune-bench-fusion [--threads N] [--reps N] [--json FILE] [--case TEXT]...
//                         [--rtc-binary PATH] [--worker-binary PATH] [--cache-dir DIR]
#include <unistd.h>
#include <CLI/CLI.hpp>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <thread>

#include <fmt/format.h>

#include "bench/gpu/fusion/memory_cases.h"
#include "bench/gpu/gemm/cuda_device_json.h"
#include "bench/gpu/gemm/session_choice.h"
#include "bench/gpu/gemm/variant_timing.h"
#include "bench/tuning/session_runner.h"
#include "kernels/core/kernel_key.h"
#include "runtime/cuda/cubin_compiler.h"
#include "runtime/cuda/cuda_backend.h"
#include "runtime/cuda/cuda_executor.h"
#include "runtime/rtc/rtc_compiler.h"
#include "tuner/worker/host_reference.h"
#include "tuner/worker/problem_upload.h"

namespace fs = std::filesystem;
using namespace tiletune;
namespace cu = runtime::cuda;

namespace {

// Inputs drawn from the same seed for every contender.
constexpr uint64_t kInputSeed = 6;
// f32 kernels against a float64 reference (fast exp included).
constexpr double kTolerance = 1e-4;
// 16-bit outputs: one rounding to 8 (bf16) or 11 (f16) mantissa bits.
constexpr double k16BitTolerance = 1e-2;

int Fail(const std::string& why) {
  std::cerr << "tiletune-bench-fusion: " << why << "\n";
  return 1;
}

struct KernelResult {
  std::string key;
  bench::TunedVariant tuned;
};

// Tunes one kernel key with the daemon's tuner, then times its choice on
// the device; the uploaded problem is freed after.
KernelResult TuneKernel(bench::TuningSessionRunner& session_runner,
                        const bench::TimingSettings& settings, runtime::DeviceExecutor& executor,
                        const v1::KernelKey& key) {
  KernelResult result{kernels::CanonicalKeyString(key), {}};
  // Before this process uploads its copy of the problem: the worker
  // allocates its own on the same GPU.
  result.tuned.choice = bench::TuneWholeSpace(session_runner, key);
  const auto& variant = result.tuned.choice.variant;
  if (!variant) return result;
  const tuner::ProblemInputs problem = tuner::MakeProblemInputs(key, kInputSeed);
  const runtime::KernelArguments args = tuner::UploadProblem(executor, problem);
  bench::TimingSettings checked = settings;
  if (problem.key.output_dtype() != v1::DTYPE_F32) checked.tolerance = k16BitTolerance;
  // Memory-bound sizes: the whole float64 reference costs a few operations
  // per element.
  const tuner::Reference reference = tuner::HostReference(problem, settings.threads);
  result.tuned.timed = bench::TimeVariant(checked, *result.tuned.choice.kernel, problem, reference,
                                          executor, args, *variant);
  executor.ReleaseAll();
  return result;
}

nlohmann::json KernelJson(const KernelResult& k) {
  const bench::SessionChoice& c = k.tuned.choice;
  nlohmann::json json = bench::SessionChoiceJson(c);
  json["key"] = k.key;
  json["median_us"] = bench::Timed(k.tuned) ? k.tuned.timed->timing.median_us() : 0.0;
  json["rel_error"] = k.tuned.timed ? k.tuned.timed->rel_error : 0.0;
  json["failed"] = c.compile_failed + c.rejected + c.run_failed + c.wrong;
  json["timing_error"] = k.tuned.timed ? k.tuned.timed->error : std::string();
  return json;
}

double SumMicros(const std::vector<KernelResult>& kernels) {
  double us = 0;
  for (const auto& k : kernels) us += k.tuned.timed->timing.median_us();
  return us;
}

bool Complete(const std::vector<KernelResult>& kernels) {
  for (const auto& k : kernels) {
    if (!bench::Timed(k.tuned)) return false;
  }
  return !kernels.empty();
}

// What the daemon would serve for each kernel where that is not the variant
// timed here, and why the tuner failed where it did.
void PrintVendorChoices(const std::vector<KernelResult>& kernels) {
  for (const auto& k : kernels) {
    const bench::SessionChoice& c = k.tuned.choice;
    if (c.served == "vendor")
      std::cout << fmt::format("  {}: the daemon would serve {} (VENDOR): {}\n", k.key,
                               c.baseline_name, c.decision);
    if (!c.error.empty()) std::cout << fmt::format("  {}: the tuner failed: {}\n", k.key, c.error);
  }
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"tiletune's memory-bound and fused kernels on one NVIDIA GPU"};
  std::string json_path, rtc_binary, worker_binary, cache_dir;
  std::vector<std::string> only;
  int threads = static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
  int reps = 20;
  app.add_option("--threads", threads,
                 "parallel NVRTC compiles and reference threads (default: hardware threads)")
      ->check(CLI::Range(1, 1024));
  app.add_option("--reps", reps, "timed runs per kernel (median reported)")
      ->check(CLI::Range(20, 100000));
  app.add_option("--json", json_path, "also write the results to this JSON file");
  app.add_option("--case", only,
                 "run only the cases whose name contains this text (repeatable; the copy, which "
                 "measures the memory's speed, always runs)");
  app.add_option("--rtc-binary", rtc_binary, "tiletune-rtc (default: beside this program)");
  app.add_option("--worker-binary", worker_binary,
                 "tiletune-worker (default: beside this program)");
  app.add_option("--cache-dir", cache_dir,
                 "compiled-kernel cache (default: <tmp>/tiletune-bench-fusion-cache)");
  CLI11_PARSE(app, argc, argv);
  if (const auto missing = bench::ResolveBenchTools(rtc_binary, worker_binary, cache_dir,
                                                    "tiletune-bench-fusion-cache")) {
    return Fail(*missing);
  }

  std::string why;
  auto executor = cu::CudaExecutor::Open(&why);
  if (!executor) return Fail("no CUDA device: " + why);
  auto driver = cu::CudaDriver::Open(&why);
  if (!driver) return Fail("no CUDA driver: " + why);
  auto nvrtc = runtime::OpenNvrtc(&why);
  if (!nvrtc) return Fail("no NVRTC: " + why);

  const cu::CubinCompiler::Options compile_options{cache_dir, int64_t{1} << 34, rtc_binary};
  auto backend = cu::CudaBackend::Open(compile_options, &why);
  if (!backend) return Fail("no CUDA backend: " + why);

  try {
    std::string arch;
    nlohmann::json report = {{"device", bench::CudaDeviceJson(*driver, &arch)}};
    report["device"]["nvrtc"] = nvrtc->version();
    // The tuner's cache too: the chosen variant compiles again as a hit.
    cu::CubinCompiler compiler(compile_options, nvrtc->version());
    bench::TuningSessionRunner session_runner(*backend, worker_binary, threads);
    const bench::TimingSettings settings{compiler, arch, threads, {3, reps}, kTolerance};

    double copy_tbps = 0;
    bool complete = true;
    std::cout << fmt::format("{:<42} {:>10} {:>9} {:>7} {:>11} {:>8}\n", "case", "fused us", "TB/s",
                             "%copy", "unfused us", "speedup");
    for (const bench::MemoryCase& c : bench::MemoryCases()) {
      const bool wanted = only.empty() || copy_tbps == 0 ||
                          std::any_of(only.begin(), only.end(), [&](const std::string& text) {
                            return c.name.find(text) != std::string::npos;
                          });
      if (!wanted) continue;
      std::cerr << c.name << "..." << std::endl;
      std::vector<KernelResult> fused, unfused;
      for (const auto& key : c.fused)
        fused.push_back(TuneKernel(session_runner, settings, *executor, key));
      for (const auto& key : c.unfused)
        unfused.push_back(TuneKernel(session_runner, settings, *executor, key));
      nlohmann::json row = {{"case", c.name}, {"bytes", c.bytes}};
      for (const auto& k : fused) row["fused"].push_back(KernelJson(k));
      for (const auto& k : unfused) row["unfused"].push_back(KernelJson(k));
      if (!Complete(fused) || (!c.unfused.empty() && !Complete(unfused))) {
        complete = false;
        row["error"] = "a kernel had no correct variant; see first_failure";
        std::cout << fmt::format("{:<42} no correct variant\n", c.name);
        PrintVendorChoices(fused);
        PrintVendorChoices(unfused);
        report["cases"].push_back(row);
        continue;
      }
      const double fused_us = SumMicros(fused);
      const double tbps = static_cast<double>(c.bytes) / (fused_us * 1e-6) / 1e12;
      if (copy_tbps == 0) copy_tbps = tbps;  // the first case is the copy
      row["fused_us"] = fused_us;
      row["tbps"] = tbps;
      row["fraction_of_copy"] = tbps / copy_tbps;
      std::string unfused_text = "-", speedup_text = "-";
      if (!unfused.empty()) {
        const double unfused_us = SumMicros(unfused);
        row["unfused_us"] = unfused_us;
        row["fusion_speedup"] = unfused_us / fused_us;
        unfused_text = fmt::format("{:.1f}", unfused_us);
        speedup_text = fmt::format("{:.2f}x", unfused_us / fused_us);
      }
      std::cout << fmt::format("{:<42} {:>10.1f} {:>9.2f} {:>6.1f}% {:>11} {:>8}\n", c.name,
                               fused_us, tbps, 100 * tbps / copy_tbps, unfused_text, speedup_text);
      PrintVendorChoices(fused);
      PrintVendorChoices(unfused);
      report["cases"].push_back(row);
    }
    report["copy_tbps"] = copy_tbps;
    if (!json_path.empty()) {
      std::ofstream file(json_path);
      file << report.dump(2) << "\n";
      if (!file) return Fail("cannot write " + json_path);
    }
    return complete ? 0 : 1;
  } catch (const std::exception& e) {
    return Fail(e.what());
  }
}
