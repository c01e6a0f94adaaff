#include "runtime/cuda/cublaslt_gemm.h"

#include <algorithm>
#include <stdexcept>
#include <vector>

#include "runtime/cuda/cublaslt_algorithm.h"

namespace tiletune::runtime::cuda {

namespace {

// Bytes of one element of D (f32, or a 16-bit output).
size_t DElementBytes(const CublasLtGemmSpec& spec) {
  return spec.d.type == CUDA_R_32F ? 4 : 2;
}

}  // namespace

CublasLtGemm::CublasLtGemm(const CublasLtLibrary& library, const CublasLtGemmSpec& spec,
                           const void* bias, const CublasLtAlgorithmChoice& choice)
    : library_(library), api_(library.api()), spec_(spec), bias_(bias) {
  // A failure releases what was created before it (no destructor runs for
  // an object whose constructor throws).
  struct Undo {
    CublasLtGemm* self;
    bool done = false;
    ~Undo() {
      if (!done) self->Release();
    }
  } undo{this};
  if (spec_.fold.bias_op.has_value() != (bias_ != nullptr)) {
    throw std::invalid_argument(spec_.fold.bias_op ? "the spec folds a bias but none was given"
                                                   : "a bias was given to a spec without one");
  }
  library_.Check(api_.cublasLtCreate(&handle_), "cublasLtCreate");
  library_.Check(api_.cublasLtMatmulDescCreate(&desc_, spec_.compute_type, spec_.scale_type),
                 "cublasLtMatmulDescCreate(compute " + std::to_string(spec_.compute_type) + ")");
  SetDesc(CUBLASLT_MATMUL_DESC_TRANSA, &spec_.trans_a, sizeof(spec_.trans_a), "TRANSA");
  SetDesc(CUBLASLT_MATMUL_DESC_TRANSB, &spec_.trans_b, sizeof(spec_.trans_b), "TRANSB");
  SetDesc(CUBLASLT_MATMUL_DESC_EPILOGUE, &spec_.epilogue, sizeof(spec_.epilogue), "EPILOGUE");
  if (bias_) SetDesc(CUBLASLT_MATMUL_DESC_BIAS_POINTER, &bias_, sizeof(bias_), "BIAS_POINTER");
  CreateLayout(&a_, spec_.a, "A (our B)");
  CreateLayout(&b_, spec_.b, "B (our A)");
  CreateLayout(&d_, spec_.d, "C/D (our C)");
  library_.Check(api_.cublasLtMatmulPreferenceCreate(&preference_),
                 "cublasLtMatmulPreferenceCreate");
  const uint64_t workspace = kWorkspaceBytes;
  library_.Check(
      api_.cublasLtMatmulPreferenceSetAttribute(
          preference_, CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES, &workspace, sizeof(workspace)),
      "cublasLtMatmulPreferenceSetAttribute(MAX_WORKSPACE_BYTES)");
  std::optional<std::string> refused;
  if (choice.chosen) refused = Accept(*choice.chosen);
  if (!choice.chosen || refused) {
    // A refused choice runs what cuBLASLt itself would: its first.
    const int offered = refused
                            ? PlanFromHeuristic(1, 0)
                            : PlanFromHeuristic(choice.heuristic_requested, choice.heuristic_index);
    algorithm_.set_heuristic_index(refused ? 0 : choice.heuristic_index);
    algorithm_.set_heuristic_results(offered);
  }
  algorithm_.set_algo(AlgoBytes(plan_.algo));
  algorithm_.set_library_version(static_cast<int64_t>(api_.cublasLtGetVersion()));
  algorithm_.set_epilogue_pass(spec_.epilogue_pass);
  algorithm_.set_workspace_bytes(static_cast<int64_t>(plan_.workspaceSize));
  std::string description =
      DescribeCublasLtAlgorithm(algorithm_.heuristic_index(), algorithm_.heuristic_results(), spec_,
                                plan_.workspaceSize, ReadAlgoConfig(api_, plan_.algo));
  if (refused) {
    description += ", instead of the chosen " + choice.chosen->description() + ": " + *refused;
  }
  algorithm_.set_description(std::move(description));
  undo.done = true;
}

CublasLtGemm::~CublasLtGemm() {
  Release();
}

std::optional<std::string> CublasLtGemm::Accept(const v1::VendorAlgorithm& chosen) {
  const auto version = static_cast<int64_t>(api_.cublasLtGetVersion());
  if (chosen.library_version() != version) {
    return "it was offered by cuBLASLt " + std::to_string(chosen.library_version()) +
           ", this is cuBLASLt " + std::to_string(version);
  }
  if (chosen.epilogue_pass() != spec_.epilogue_pass) {
    return std::string("it was chosen for the plain product ") +
           (chosen.epilogue_pass() ? "followed by" : "without") +
           " our epilogue pass, and this plan is not";
  }
  const std::optional<cublasLtMatmulAlgo_t> algo = AlgoOfBytes(chosen.algo());
  if (!algo) {
    return "its algo has " + std::to_string(chosen.algo().size()) + " bytes, not the " +
           std::to_string(sizeof(cublasLtMatmulAlgo_t)) + " of a cublasLtMatmulAlgo_t";
  }
  cublasLtMatmulHeuristicResult_t checked{};
  if (const cublasStatus_t status =
          api_.cublasLtMatmulAlgoCheck(handle_, desc_, a_, b_, d_, d_, &*algo, &checked);
      status != CUBLAS_STATUS_SUCCESS) {
    return library_.Describe(status, "cublasLtMatmulAlgoCheck(" + DescribeSpec(spec_) + ")");
  }
  if (checked.workspaceSize > kWorkspaceBytes) {
    return "it needs " + std::to_string(checked.workspaceSize) + " bytes of workspace, more than " +
           std::to_string(kWorkspaceBytes);
  }
  plan_ = checked;
  plan_.algo = *algo;  // the check never writes it
  algorithm_.set_heuristic_index(chosen.heuristic_index());
  algorithm_.set_heuristic_results(chosen.heuristic_results());
  return std::nullopt;
}

int CublasLtGemm::PlanFromHeuristic(int requested, int index) {
  std::vector<cublasLtMatmulHeuristicResult_t> results(static_cast<size_t>(std::max(1, requested)));
  int returned = 0;
  library_.Check(api_.cublasLtMatmulAlgoGetHeuristic(handle_, desc_, a_, b_, d_, d_, preference_,
                                                     static_cast<int>(results.size()),
                                                     results.data(), &returned),
                 "cublasLtMatmulAlgoGetHeuristic(" + DescribeSpec(spec_) + ")");
  if (returned < 1) {
    throw std::runtime_error("cublasLtMatmulAlgoGetHeuristic found no algorithm for " +
                             DescribeSpec(spec_));
  }
  if (index < 0 || index >= returned) {
    throw std::runtime_error("cublasLtMatmulAlgoGetHeuristic offered " + std::to_string(returned) +
                             " algorithms for " + DescribeSpec(spec_) + "; there is no algo " +
                             std::to_string(index));
  }
  const cublasLtMatmulHeuristicResult_t& result = results[static_cast<size_t>(index)];
  if (result.state != CUBLAS_STATUS_SUCCESS) {
    throw std::runtime_error(library_.Describe(
        result.state, "cublasLtMatmulAlgoGetHeuristic's algo " + std::to_string(index)));
  }
  plan_ = result;
  return returned;
}

void CublasLtGemm::SetDesc(int attribute, const void* value, size_t bytes, const char* name) {
  library_.Check(api_.cublasLtMatmulDescSetAttribute(desc_, attribute, value, bytes),
                 std::string("cublasLtMatmulDescSetAttribute(") + name + ")");
}

void CublasLtGemm::CreateLayout(cublasLtMatrixLayout_t* layout, const CublasLtMatrix& m,
                                const char* name) {
  // Created straight into the member: Release destroys it should a later
  // call throw.
  library_.Check(api_.cublasLtMatrixLayoutCreate(layout, m.type, m.rows, m.cols, m.ld),
                 std::string("cublasLtMatrixLayoutCreate(") + name + ")");
  const int32_t batch = spec_.batch;
  if (batch > 1) {
    library_.Check(api_.cublasLtMatrixLayoutSetAttribute(
                       *layout, CUBLASLT_MATRIX_LAYOUT_BATCH_COUNT, &batch, sizeof(batch)),
                   std::string("cublasLtMatrixLayoutSetAttribute(") + name + ", BATCH_COUNT)");
    library_.Check(
        api_.cublasLtMatrixLayoutSetAttribute(*layout, CUBLASLT_MATRIX_LAYOUT_STRIDED_BATCH_OFFSET,
                                              &m.batch_stride, sizeof(m.batch_stride)),
        std::string("cublasLtMatrixLayoutSetAttribute(") + name + ", STRIDED_BATCH_OFFSET)");
  }
}

void CublasLtGemm::Release() {
  // Destroy results are ignored: nothing can be done about them here.
  if (preference_) api_.cublasLtMatmulPreferenceDestroy(preference_);
  for (auto* layout : {d_, b_, a_}) {
    if (layout) api_.cublasLtMatrixLayoutDestroy(layout);
  }
  if (desc_) api_.cublasLtMatmulDescDestroy(desc_);
  if (handle_) api_.cublasLtDestroy(handle_);
  preference_ = nullptr;
  a_ = b_ = d_ = nullptr;
  desc_ = nullptr;
  handle_ = nullptr;
}

void CublasLtGemm::Enqueue(const CublasLtOperands& o, CUstream stream) const {
  if (spec_.fold.residual_op.has_value() != (o.residual != nullptr)) {
    throw std::invalid_argument(spec_.fold.residual_op
                                    ? "the spec folds a residual but none was given"
                                    : "a residual was given to a spec without one");
  }
  // D = epilogue(alpha * A*B + beta * C): C is the residual, or D itself
  // with beta 0 (then never read).
  const float beta = o.residual ? 1.0f : 0.0f;
  const void* c = o.residual ? o.residual : o.d;
  // cuBLASLt's A is our B and its B our A (cublaslt_gemm_spec.h).
  library_.Check(api_.cublasLtMatmul(handle_, desc_, &o.alpha, o.b, a_, o.a, b_, &beta, c, d_, o.d,
                                     d_, &plan_.algo, o.workspace, kWorkspaceBytes, stream),
                 "cublasLtMatmul");
}

size_t CublasLtGemm::GateProductsBytes(const CublasLtGemmSpec& spec) {
  return static_cast<size_t>(spec.d.batch_stride) * static_cast<size_t>(spec.batch) *
         DElementBytes(spec);
}

void CublasLtGemm::EnqueueGated(CublasLtOperands operands, const void* b_up, void* products,
                                CUstream stream) const {
  char* row = static_cast<char*>(products);
  operands.d = row;
  Enqueue(operands, stream);
  operands.b = b_up;
  operands.d = row + spec_.d.rows * DElementBytes(spec_);
  Enqueue(operands, stream);
}

}  // namespace tiletune::runtime::cuda
