#include "bench/gpu/gemm/gemm_comparison.h"

#include <functional>
#include <limits>
#include <new>

#include "bench/gpu/gemm/device_problem.h"
#include "bench/gpu/gemm/sampled_check.h"
#include "kernels/kernel_template.h"
#include "runtime/cuda/cublaslt_gemm.h"
#include "tuner/worker/problem_inputs.h"
#include "tuner/worker/problem_upload.h"

namespace tiletune::bench {
namespace {

constexpr uint64_t kInputSeed = 1;

// Frees the shape's buffers however the comparison ends.
struct ReleaseScope {
  runtime::DeviceExecutor& executor;
  ~ReleaseScope() { executor.ReleaseAll(); }
};

VendorResult MeasureVendor(ComparisonRig& rig, const runtime::KernelArguments& args,
                           const tuner::ProblemInputs& problem, int64_t max_side,
                           std::string algorithm, const std::function<void()>& enqueue) {
  VendorResult result;
  result.algorithm = std::move(algorithm);
  const tuner::OutputCheck check =
      RunAndCheck(rig.executor, args, problem, rig.tuner.tolerance, max_side, enqueue);
  result.rel_error = check.rel_error;
  if (!check.ok) result.wrong = check.error;
  result.timing =
      Measure(rig.tuner.protocol, rig.executor, [&] { return rig.timer.Seconds(enqueue); });
  return result;
}

}  // namespace

ComparisonRow Compare(ComparisonRig& rig, const GemmShape& shape, Epilogue epilogue,
                      Precision precision) {
  ComparisonRow row;
  row.shape = shape;
  row.epilogue = epilogue;
  const v1::KernelKey key = GemmKey(shape, epilogue, precision);
  std::string why;
  const kernels::KernelTemplate* tile_gemm = kernels::FindKernelTemplate(key, "cuda", &why);
  if (!tile_gemm) {
    row.error = "no cuda template for the key: " + why;
    return row;
  }
  ReleaseScope release{rig.executor};
  try {
    const tuner::ProblemInputs problem = tuner::MakeProblemInputs(key, kInputSeed);
    const runtime::KernelArguments args = tuner::UploadProblem(rig.executor, problem);
    const runtime::DeviceBuffer workspace =
        rig.executor.Allocate(runtime::cuda::CublasLtGemm::kWorkspaceBytes);
    const bool whole = ValidatesEveryVariant(shape);
    const int64_t max_side = whole ? std::numeric_limits<int64_t>::max() : kSampleSide;

    row.tiletune = TuneVariants(rig.tuner, *tile_gemm, problem, rig.executor, args, whole);

    const bool fused = epilogue == Epilogue::kBiasGeluTanh;
    const void* bias = fused ? args.chain_tensors.at(0).ptr : nullptr;
    const runtime::cuda::CublasLtOperands operands{args.a.ptr,   args.b.ptr, nullptr,
                                                   args.out.ptr, 1.0f,       workspace.ptr};
    // The key's chain (bias, gelu_tanh) folds into cuBLASLt's GELU_BIAS.
    const runtime::cuda::CublasLtGemm vendor(rig.cublaslt, runtime::cuda::CublasLtGemmSpecOf(key),
                                             bias);
    row.vendor = MeasureVendor(rig, args, problem, max_side, vendor.algorithm(),
                               [&] { vendor.Enqueue(operands); });
    if (fused && precision == Precision::kBf16) {
      const runtime::cuda::CublasLtGemm plain(
          rig.cublaslt,
          runtime::cuda::CublasLtGemmSpecOf(GemmKey(shape, Epilogue::kPlain, precision)), nullptr);
      row.unfused = MeasureVendor(rig, args, problem, max_side,
                                  plain.algorithm() + " + bias_gelu_tanh kernel", [&] {
                                    plain.Enqueue(operands);
                                    rig.bias_gelu.Enqueue(args.out.ptr, bias, shape.m, shape.n);
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
