// tiletune-bench-gemm: tiletune's tile GEMM against cuBLASLt on one NVIDIA
// GPU, in one process, on the same inputs and with the same timing protocol
// (issues 4 and 16). For each shape and epilogue the daemon's tuner (a
// TuningSession with the tiletune-worker process) searches every valid
// tile_gemm variant; the variant it chose (its winner, or with VENDOR the
// fastest it measured) is then timed in this process, next to cuBLASLt as
// the tuner's baseline runs it: every algorithm its heuristic offers (at
// most --algorithms), with its own epilogue where it has one and unfused
// (plain GEMM + the epilogue pass). The table prints ratio = cuBLASLt time /
// tiletune time against heuristic #0 (the baseline before best-of-N) and
// against the best-of-N baseline, the best algorithm, and what the daemon
// would serve.
//
//   tiletune-bench-gemm [--shapes "m,n,k;..."] [--dtype bf16|f32-tf32] [--b-layout col|row]
//                       [--epilogues "plain,..."] [--algorithms N] [--threads N]
//                       [--reps N] [--json FILE] [--rtc-binary PATH]
//                       [--worker-binary PATH] [--cache-dir DIR]
//
// --dtype f32-tf32 compares f32 keys that allow tf32: tile_gemm's float
// tiles (mma.sync .tf32) against cuBLASLt's FAST_TF32, checked at the
// daemon's tf32 tolerance.
#include <unistd.h>
#include <CLI/CLI.hpp>

#include <filesystem>
#include <fstream>
#include <iostream>
#include <thread>

#include "bench/gpu/gemm/cuda_device_json.h"
#include "bench/gpu/gemm/gemm_comparison.h"
#include "bench/gpu/gemm/gemm_report.h"
#include "bench/gpu/gemm/gemm_shapes.h"
#include "runtime/cuda/cubin_compiler.h"
#include "runtime/cuda/cublaslt_library.h"
#include "runtime/cuda/cuda_backend.h"
#include "runtime/cuda/cuda_executor.h"
#include "runtime/rtc/rtc_compiler.h"
#include "tuner/tuning_session.h"

namespace fs = std::filesystem;
using namespace tiletune;
namespace cu = runtime::cuda;

namespace {

int Fail(const std::string& why) {
  std::cerr << "tiletune-bench-gemm: " << why << "\n";
  return 1;
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"tiletune's tile GEMM against cuBLASLt on one NVIDIA GPU"};
  std::string shapes_text, json_path, rtc_binary, worker_binary, cache_dir;
  std::string epilogues_text = "plain,bias+gelu_tanh";
  int threads = static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
  int reps = 20;
  int algorithms = tuner::TuningLimits{}.baseline_algorithms;
  std::string dtype = "bf16";
  std::string b_layout_text = "col";
  app.add_option("--shapes", shapes_text, "\"m,n,k;m,n,k...\" (default: issue 4's shapes)");
  app.add_option("--dtype", dtype, "operands and output: bf16 (default) or f32-tf32")
      ->check(CLI::IsMember({"bf16", "f32-tf32"}));
  app.add_option("--b-layout", b_layout_text,
                 "B column-major (x @ W.t(), default) or row-major (x @ W)")
      ->check(CLI::IsMember({"col", "row"}));
  app.add_option("--epilogues", epilogues_text,
                 "comma-separated: plain, bias+gelu_tanh, bias+gelu_tanh+residual, swiglu")
      ->capture_default_str();
  app.add_option("--algorithms", algorithms,
                 "cuBLASLt heuristic algorithms tried per way (the daemon's baseline_algorithms)")
      ->check(CLI::Range(1, tuner::kMaxBaselineAlgorithms))
      ->capture_default_str();
  app.add_option("--threads", threads,
                 "parallel NVRTC compiles and reference threads (default: hardware threads)")
      ->check(CLI::Range(1, 1024));
  app.add_option("--reps", reps, "timed runs per contender (median reported)")
      ->check(CLI::Range(20, 100000));
  app.add_option("--json", json_path, "also write the results to this JSON file");
  app.add_option("--rtc-binary", rtc_binary, "tiletune-rtc (default: beside this program)");
  app.add_option("--worker-binary", worker_binary,
                 "tiletune-worker (default: beside this program)");
  app.add_option("--cache-dir", cache_dir,
                 "compiled-kernel cache (default: <tmp>/tiletune-bench-gemm-cache)");
  CLI11_PARSE(app, argc, argv);

  std::vector<bench::GemmShape> shapes;
  std::vector<bench::Epilogue> epilogues;
  try {
    shapes = shapes_text.empty() ? bench::DefaultShapes() : bench::ParseShapeList(shapes_text);
    epilogues = bench::ParseEpilogueList(epilogues_text);
  } catch (const std::invalid_argument& e) {
    return Fail(e.what());
  }
  if (const auto missing = bench::ResolveBenchTools(rtc_binary, worker_binary, cache_dir,
                                                    "tiletune-bench-gemm-cache")) {
    return Fail(*missing);
  }

  std::string why;
  auto executor = cu::CudaExecutor::Open(&why);
  if (!executor) return Fail("no CUDA device: " + why);
  auto driver = cu::CudaDriver::Open(&why);
  if (!driver) return Fail("no CUDA driver: " + why);
  auto cublaslt = cu::CublasLtLibrary::Open(&why);
  if (!cublaslt) return Fail(why);
  auto nvrtc = runtime::OpenNvrtc(&why);
  if (!nvrtc) return Fail("no NVRTC: " + why);

  const cu::CubinCompiler::Options compile_options{cache_dir, int64_t{1} << 34, rtc_binary};
  auto backend = cu::CudaBackend::Open(compile_options, &why);
  if (!backend) return Fail("no CUDA backend: " + why);

  try {
    std::string arch;
    nlohmann::json device = bench::CudaDeviceJson(*driver, &arch);
    device["nvrtc"] = nvrtc->version();
    device["cublaslt_version"] = cublaslt->api().cublasLtGetVersion();
    // The tuner's cache too: the chosen variant compiles again as a hit.
    cu::CubinCompiler compiler(compile_options, nvrtc->version());
    bench::TuningSessionRunner session_runner(*backend, worker_binary, threads);

    bench::StreamTimer timer(*driver);
    const bench::Precision precision =
        dtype == "bf16" ? bench::Precision::kBf16 : bench::Precision::kF32Tf32;
    // Relative L2 error allowed: the tuner's own, for bf16 output or tf32 inputs.
    const tuner::TuningLimits limits;
    const double tolerance =
        precision == bench::Precision::kBf16 ? limits.tolerance_half : limits.tolerance_tf32;
    bench::ComparisonRig rig{
        session_runner, *executor,
        *driver,        *cublaslt,
        timer,          bench::TimingSettings{compiler, arch, threads, {3, reps}, tolerance},
        algorithms};
    device["dtype"] = bench::PrecisionName(precision);
    device["b_layout"] = b_layout_text;
    const bench::BLayout b_layout =
        b_layout_text == "col" ? bench::BLayout::kColMajor : bench::BLayout::kRowMajor;
    device["cublaslt_algorithms"] = algorithms;

    std::cerr << device["name"].get<std::string>() << " (" << arch << "), " << nvrtc->version()
              << ", cuBLASLt " << cublaslt->api().cublasLtGetVersion() << ", " << threads
              << " compile threads, " << dtype << ", B " << b_layout_text << "-major\n";
    std::vector<bench::ComparisonRow> rows;
    for (const bench::GemmShape& shape : shapes) {
      for (const bench::Epilogue epilogue : epilogues) {
        std::cerr << shape.m << "x" << shape.n << "x" << shape.k << " "
                  << bench::EpilogueName(epilogue) << "..." << std::endl;
        rows.push_back(bench::Compare(rig, shape, epilogue, precision, b_layout));
      }
    }
    bench::PrintTable(rows, std::cout);
    if (!json_path.empty()) {
      std::ofstream file(json_path);
      file << bench::ReportJson(rows, device).dump(2) << "\n";
      if (!file) return Fail("cannot write " + json_path);
    }
    const bool complete = std::ranges::all_of(rows, [](const bench::ComparisonRow& r) {
      return r.error.empty() && bench::Timed(r.tiletune);
    });
    return complete ? 0 : 1;
  } catch (const std::exception& e) {
    return Fail(e.what());
  }
}
