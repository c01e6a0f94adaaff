#include "bench/gpu/gemm/gemm_comparison.h"

#include <functional>
#include <new>
#include <stdexcept>

#include "bench/gpu/gemm/device_problem.h"
#include "bench/gpu/gemm/epilogue_pass_kernel.h"
#include "kernels/core/kernel_template.h"
#include "kernels/ops/gemm/blas_epilogue.h"
#include "kernels/ops/gemm/tile_gemm_source.h"
#include "runtime/cuda/cublaslt_gemm.h"
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
                           std::string algorithm, const std::function<void()>& enqueue) {
  VendorResult result;
  result.algorithm = std::move(algorithm);
  const tuner::OutputCheck check =
      RunAndCheck(rig.executor, args, problem, reference, rig.timing.tolerance, enqueue);
  result.rel_error = check.rel_error;
  if (!check.ok) result.wrong = check.error;
  result.timing =
      Measure(rig.timing.protocol, rig.executor, [&] { return rig.timer.Seconds(enqueue); });
  return result;
}

}  // namespace

ComparisonRow Compare(ComparisonRig& rig, const GemmShape& shape, Epilogue epilogue,
                      Precision precision) {
  ComparisonRow row;
  row.shape = shape;
  row.epilogue = epilogue;
  const v1::KernelKey key = GemmKey(shape, epilogue, precision);
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

    const runtime::cuda::CublasLtOperands operands{
        args.TensorPtr("a"), args.TensorPtr("b"), nullptr, args.TensorPtr("c"), 1.0f,
        workspace.ptr};
    const kernels::gemm::BlasEpilogue fold = kernels::gemm::FoldIntoBlasEpilogue(key);
    if (fold.fused) {
      // The key's chain (none, or bias + gelu_tanh) folds into cuBLASLt's own epilogue.
      const void* bias = fold.bias_op ? args.chain_tensors.at(*fold.bias_op).ptr : nullptr;
      const runtime::cuda::CublasLtGemm vendor(rig.cublaslt, runtime::cuda::CublasLtGemmSpecOf(key),
                                               bias);
      row.vendor = MeasureVendor(rig, args, problem, reference, vendor.algorithm().description(),
                                 [&] { vendor.Enqueue(operands); });
    }
    if (epilogue != Epilogue::kPlain) {
      const kernels::KernelSource pass_source =
          kernels::gemm::EpiloguePassSource(key, kernels::gemm::kSm90Target);
      const runtime::CompileResult pass_cubin = rig.timing.compiler.Compile(
          pass_source, rig.timing.arch, runtime::CompileLimits{kPassCompileSeconds});
      if (!pass_cubin.ok)
        throw std::runtime_error("the epilogue pass did not compile: " + pass_cubin.log);
      const EpiloguePassKernel pass(rig.driver, pass_source, pass_cubin.artifact_path);
      const runtime::cuda::CublasLtGemm plain(
          rig.cublaslt,
          runtime::cuda::CublasLtGemmSpecOf(GemmKey(shape, Epilogue::kPlain, precision)), nullptr);
      row.unfused = MeasureVendor(rig, args, problem, reference,
                                  plain.algorithm().description() + " + " + pass_source.entry, [&] {
                                    plain.Enqueue(operands);
                                    pass.Enqueue(args);
                                  });
    }
  } catch (const std::bad_alloc&) {
    row.error = "out of memory (host or device) for the problem's buffers";
  } catch (const std::exception& e) {
    row.error = e.what();
  }
  return row;
}

}  // namespace tiletune::bench
