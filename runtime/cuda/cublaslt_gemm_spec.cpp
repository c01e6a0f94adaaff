#include "runtime/cuda/cublaslt_gemm_spec.h"

#include <stdexcept>

#include "kernels/core/kernel_key.h"
#include "kernels/ops/gemm/gemm_op.h"
#include "kernels/ops/gemm/tile_gemm_space.h"

namespace tiletune::runtime::cuda {
namespace {

using kernels::gemm::BlasActivation;

int CudaType(v1::DType dtype, const char* field) {
  switch (dtype) {
    case v1::DTYPE_F32: return CUDA_R_32F;
    case v1::DTYPE_F16: return CUDA_R_16F;
    case v1::DTYPE_BF16: return CUDA_R_16BF;
    default:
      throw std::invalid_argument(std::string(field) + ": cuBLASLt takes f32, f16 or bf16, not " +
                                  std::string(kernels::DTypeName(dtype)));
  }
}

CublasLtMatrix Matrix(int type, int64_t rows, int64_t cols, int64_t batch_stride) {
  return {type, static_cast<uint64_t>(rows), static_cast<uint64_t>(cols), rows, batch_stride};
}

}  // namespace

uint32_t CublasLtEpilogueOf(const kernels::gemm::BlasEpilogue& fold) {
  const bool bias = fold.bias_op.has_value();
  switch (fold.activation) {
    case BlasActivation::kRelu: return bias ? CUBLASLT_EPILOGUE_RELU_BIAS : CUBLASLT_EPILOGUE_RELU;
    case BlasActivation::kGeluTanh:
      return bias ? CUBLASLT_EPILOGUE_GELU_BIAS : CUBLASLT_EPILOGUE_GELU;
    case BlasActivation::kNone: break;
  }
  return bias ? CUBLASLT_EPILOGUE_BIAS : CUBLASLT_EPILOGUE_DEFAULT;
}

CublasLtGemmSpec CublasLtGemmSpecOf(const v1::KernelKey& raw) {
  const v1::KernelKey key = kernels::NormalizeKernelKey(raw);
  if (key.op() != kernels::gemm::kOpName) {
    throw std::invalid_argument("op: cuBLASLt runs gemm, not " + key.op());
  }
  const int in = CudaType(key.input_dtype(), "input_dtype");
  const int out = CudaType(key.output_dtype(), "output_dtype");
  if (out != in && out != CUDA_R_32F) {
    throw std::invalid_argument(
        "output_dtype: cuBLASLt writes " + std::string(kernels::DTypeName(key.input_dtype())) +
        " inputs as themselves or f32, not " + std::string(kernels::DTypeName(key.output_dtype())));
  }
  const kernels::gemm::GemmProblem p = kernels::gemm::ProblemOf(key);
  CublasLtGemmSpec spec;
  spec.compute_type =
      in == CUDA_R_32F && key.allow_tf32() ? CUBLAS_COMPUTE_32F_FAST_TF32 : CUBLAS_COMPUTE_32F;
  // The layouts of the header's table: (rows, cols) as stored column-major.
  spec.trans_a = p.b_col_major ? CUBLAS_OP_T : CUBLAS_OP_N;
  spec.a = p.b_col_major ? Matrix(in, p.k, p.n, p.k * p.n) : Matrix(in, p.n, p.k, p.k * p.n);
  spec.trans_b = p.a_col_major ? CUBLAS_OP_T : CUBLAS_OP_N;
  spec.b = p.a_col_major ? Matrix(in, p.m, p.k, p.m * p.k) : Matrix(in, p.k, p.m, p.m * p.k);
  spec.d = Matrix(out, p.n, p.m, p.m * p.n);
  if (p.gated) {
    spec.gated = true;
    spec.d.ld = 2 * p.n;
    spec.d.batch_stride = 2 * p.m * p.n;
  }
  spec.batch = static_cast<int32_t>(p.batch);
  spec.fold = kernels::gemm::FoldIntoBlasEpilogue(key);
  spec.epilogue = CublasLtEpilogueOf(spec.fold);
  return spec.fold.fused ? spec : WithEpiloguePass(spec);
}

CublasLtGemmSpec WithEpiloguePass(CublasLtGemmSpec spec) {
  spec.fold = {};
  spec.epilogue = CUBLASLT_EPILOGUE_DEFAULT;
  spec.epilogue_pass = true;
  return spec;
}

std::string DescribeSpec(const CublasLtGemmSpec& s) {
  const auto matrix = [](const char* name, const CublasLtMatrix& m) {
    return std::string(name) + " " + std::to_string(m.rows) + "x" + std::to_string(m.cols) +
           " ld " + std::to_string(m.ld) + " type " + std::to_string(m.type);
  };
  return "TRANSA=" + std::string(s.trans_a == CUBLAS_OP_T ? "T " : "N ") + matrix("A", s.a) +
         ", TRANSB=" + std::string(s.trans_b == CUBLAS_OP_T ? "T " : "N ") + matrix("B", s.b) +
         ", " + matrix("D", s.d) + ", batch " + std::to_string(s.batch) + ", epilogue " +
         std::to_string(s.epilogue) + (s.gated ? ", twice (gate, up)" : "") +
         (s.epilogue_pass ? " + our epilogue pass" : "") + ", compute " +
         std::to_string(s.compute_type);
}

}  // namespace tiletune::runtime::cuda
