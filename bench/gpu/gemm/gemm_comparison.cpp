#include "bench/gpu/gemm/gemm_comparison.h"

#include <functional>
#include <memory>
#include <new>
#include <stdexcept>

#include "bench/gpu/gemm/device_problem.h"
#include "bench/gpu/gemm/epilogue_pass_kernel.h"
#include "kernels/core/kernel_template.h"
#include "kernels/ops/gemm/cublaslt_baseline.h"
#include "runtime/cuda/cublaslt_gemm.h"
#include "tuner/baseline_step.h"
#include "tuner/worker/problem_inputs.h"
#include "tuner/worker/problem_upload.h"
#include "tuner/worker/reference_rows.h"

namespace tiletune::bench {
namespace {

constexpr uint64_t kInputSeed = 1;
// Large shapes are checked on the rows the worker would sample: this many
// drawn from kSampleSeed, plus the first, last and partial-tile rows.
constexpr int kSampleRows = 64;
constexpr uint64_t kSampleSeed = 4;
// Seconds NVRTC may take for the epilogue pass (a few lines of device code).
constexpr int kPassCompileSeconds = 120;

// Frees the shape's buffers however the comparison ends.
struct ReleaseScope {
  runtime::DeviceExecutor& executor;
  ~ReleaseScope() { executor.ReleaseAll(); }
};

VendorResult MeasureVendor(ComparisonRig& rig, const runtime::KernelArguments& args,
                           const tuner::ProblemInputs& problem, const tuner::Reference& reference,
                           const std::function<void()>& enqueue) {
  VendorResult result;
  const tuner::OutputCheck check =
      RunAndCheck(rig.executor, args, problem, reference, rig.timing.tolerance, enqueue);
  result.rel_error = check.rel_error;
  if (!check.ok) result.wrong = check.error;
  result.timing =
      Measure(rig.timing.protocol, rig.executor, [&] { return rig.timer.Seconds(enqueue); });
  return result;
}

// The pass of `source`, compiled and loaded; throws when it does not compile.
std::unique_ptr<EpiloguePassKernel> PassKernel(ComparisonRig& rig,
                                               const kernels::KernelSource& source) {
  const runtime::CompileResult cubin = rig.timing.compiler.Compile(
      source, rig.timing.arch, runtime::CompileLimits{kPassCompileSeconds});
  if (!cubin.ok) throw std::runtime_error("the epilogue pass did not compile: " + cubin.log);
  return std::make_unique<EpiloguePassKernel>(rig.driver, source, cubin.artifact_path);
}

}  // namespace

ComparisonRow Compare(ComparisonRig& rig, const GemmShape& shape, Epilogue epilogue,
                      Precision precision, BLayout b_layout) {
  ComparisonRow row;
  row.shape = shape;
  row.epilogue = epilogue;
  const v1::KernelKey key = GemmKey(shape, epilogue, precision, b_layout);
  ReleaseScope release{rig.executor};
  try {
    // Before this process uploads its copy of the problem: the worker
    // allocates its own on the same GPU.
    row.tiletune.choice = TuneWholeSpace(rig.tuner, key);
    const tuner::ProblemInputs problem = tuner::MakeProblemInputs(key, kInputSeed);
    const runtime::KernelArguments args = tuner::UploadProblem(rig.executor, problem);
    const runtime::DeviceBuffer workspace =
        rig.executor.Allocate(runtime::cuda::CublasLtGemm::kWorkspaceBytes);
    // Computed once: every contender is checked against the same rows.
    const tuner::Reference reference =
        ChecksWholeOutput(shape)
            ? tuner::HostReference(problem, rig.timing.threads)
            : tuner::HostReference(problem, tuner::SampledRows(problem, kSampleRows, kSampleSeed),
                                   rig.timing.threads);

    if (const auto& variant = row.tiletune.choice.variant) {
      row.tiletune.timed = TimeVariant(rig.timing, *row.tiletune.choice.kernel, problem, reference,
                                       rig.executor, args, *variant);
    }

    // cuBLASLt as the tuner's baseline runs it: each way, each algorithm.
    const kernels::Baseline baseline = kernels::gemm::CublasLtBaseline(key);
    const std::unique_ptr<EpiloguePassKernel> pass =
        baseline.source ? PassKernel(rig, *baseline.source) : nullptr;
    for (const tuner::BaselineRoute& route : tuner::BaselineRoutes(baseline)) {
      namespace cu = runtime::cuda;
      const cu::CublasLtGemmSpec spec = route.with_source
                                            ? cu::WithEpiloguePass(cu::CublasLtGemmSpecOf(key))
                                            : cu::CublasLtGemmSpecOf(key);
      const auto chain_tensor = [&](const std::optional<int>& slot) -> void* {
        return slot ? args.chain_tensors.at(*slot).ptr : nullptr;
      };
      const cu::CublasLtOperands operands{args.TensorPtr("a"),
                                          args.TensorPtr("b"),
                                          chain_tensor(spec.fold.residual_op),
                                          args.TensorPtr("c"),
                                          1.0f,
                                          workspace.ptr};
      // A gated key's two calls write both products here; the pass reads
      // them where it would read A.
      const runtime::DeviceBuffer products =
          spec.gated ? rig.executor.Allocate(cu::CublasLtGemm::GateProductsBytes(spec))
                     : runtime::DeviceBuffer{};
      runtime::KernelArguments pass_args = args;
      if (spec.gated) pass_args.tensors["a"] = products;
      int algorithms = 1;  // until the heuristic says how many it offers
      for (int index = 0; index < algorithms; ++index) {
        std::unique_ptr<cu::CublasLtGemm> plan;
        try {
          plan = std::make_unique<cu::CublasLtGemm>(
              rig.cublaslt, spec, chain_tensor(spec.fold.bias_op),
              cu::CublasLtAlgorithmChoice{.heuristic_requested = rig.algorithms,
                                          .heuristic_index = index});
        } catch (const std::runtime_error& e) {
          row.candidates.push_back({.wrong = e.what()});
          continue;
        }
        if (index == 0) algorithms = plan->algorithm().heuristic_results();
        VendorResult result = MeasureVendor(rig, args, problem, reference, [&] {
          if (spec.gated) {
            plan->EnqueueGated(operands, args.TensorPtr("b_up"), products.ptr);
          } else {
            plan->Enqueue(operands);
          }
          if (route.with_source) pass->Enqueue(pass_args);
        });
        result.algorithm = plan->algorithm();
        row.candidates.push_back(std::move(result));
      }
    }
    if (!row.candidates.empty()) row.heuristic0 = row.candidates.front();
    row.best = FastestVendor(row.candidates);
  } catch (const std::bad_alloc&) {
    row.error = "out of memory (host or device) for the problem's buffers";
  } catch (const std::exception& e) {
    row.error = e.what();
  }
  return row;
}

}  // namespace tiletune::bench
