#include "kernels/ops/gemm/gemm_op.h"

#include <algorithm>
#include <cmath>
#include <cstddef>

#include "kernels/core/kernel_key.h"
#include "kernels/ops/gemm/gemm_args.h"

namespace tiletune::kernels::gemm {
namespace {

// Columns of one pass over row-major B keep their accumulators in L1.
constexpr int64_t kColumnBlock = 512;

// A gated key multiplies twice.
int64_t Flops(const v1::KernelKey& key) {
  return (Gated(key) ? 4 : 2) * DimSize(key, "m").value_or(0) * DimSize(key, "n").value_or(0) *
         DimSize(key, "k").value_or(0) * DimSize(key, "batch").value_or(1);
}

int64_t BElements(const v1::KernelKey& key) {
  return DimSize(key, "k").value_or(0) * DimSize(key, "n").value_or(0) *
         DimSize(key, "batch").value_or(1);
}

// b_up, as large as b, where the key has a gate.
int64_t OptionalTensorBytes(const v1::KernelKey& key) {
  if (!Gated(key)) return 0;
  const bool half = key.input_dtype() == v1::DTYPE_F16 || key.input_dtype() == v1::DTYPE_BF16;
  return BElements(key) * (half ? 2 : 4);
}

std::vector<OptionalInput> OptionalInputs(const v1::KernelKey& key) {
  if (!Gated(key)) return {};
  return {{.name = "b_up", .elements = BElements(key), .shaped_like = "b"}};
}

// The gemm's operands as its reference reads them (b is b_up for a gate's
// second product).
struct GemmOperands {
  std::span<const float> a, b;
  int64_t m, n, k, lda, ldb;
  bool a_col_major, b_col_major;
};

GemmOperands Operands(const ReferenceArgs& args, std::string_view b) {
  return {args.Tensor("a"),
          args.Tensor(b),
          args.Int("m"),
          args.Int("n"),
          args.Int("k"),
          args.Int("lda"),
          args.Int("ldb"),
          IsColMajor(args.key, "a"),
          IsColMajor(args.key, "b")};
}

// Rows of A·B of one batch entry into `out` (rows.size() x n). A's rows are
// widened once; B is read along its contiguous dimension.
void ProductRows(const ReferenceArgs& args, std::string_view b_name, std::span<const int64_t> rows,
                 double* out) {
  const GemmOperands p = Operands(args, b_name);
  const int64_t entry = rows.front() / p.m;
  const float* a = p.a.data() + entry * p.m * p.k;
  const float* b = p.b.data() + entry * p.k * p.n;
  const auto r = static_cast<int64_t>(rows.size());
  std::vector<double> a_rows(static_cast<size_t>(r * p.k));
  for (int64_t ri = 0; ri < r; ++ri) {
    const int64_t i = rows[static_cast<size_t>(ri)] - entry * p.m;
    for (int64_t q = 0; q < p.k; ++q) {
      a_rows[ri * p.k + q] = p.a_col_major ? a[q * p.lda + i] : a[i * p.lda + q];
    }
  }
  if (p.b_col_major) {
    for (int64_t j = 0; j < p.n; ++j) {
      const float* bj = b + j * p.ldb;
      for (int64_t ri = 0; ri < r; ++ri) {
        const double* ai = a_rows.data() + ri * p.k;
        // Four partial sums: independent chains the CPU can overlap.
        double s[4] = {0, 0, 0, 0};
        int64_t q = 0;
        for (; q + 4 <= p.k; q += 4) {
          for (int u = 0; u < 4; ++u) s[u] += ai[q + u] * bj[q + u];
        }
        for (; q < p.k; ++q) s[0] += ai[q] * bj[q];
        out[ri * p.n + j] = (s[0] + s[1]) + (s[2] + s[3]);
      }
    }
    return;
  }
  std::fill(out, out + r * p.n, 0.0);
  for (int64_t j0 = 0; j0 < p.n; j0 += kColumnBlock) {
    const int64_t width = std::min(kColumnBlock, p.n - j0);
    for (int64_t q = 0; q < p.k; ++q) {
      const float* bq = b + q * p.ldb + j0;
      for (int64_t ri = 0; ri < r; ++ri) {
        const double aiq = a_rows[ri * p.k + q];
        double* ci = out + ri * p.n + j0;
        for (int64_t j = 0; j < width; ++j) ci[j] += aiq * bq[j];
      }
    }
  }
}

// Rows of C before the chain: the product, or a gated key's
// silu(A·B) ⊙ (A·B_up).
void GemmRows(const ReferenceArgs& args, std::span<const int64_t> rows, double* out) {
  ProductRows(args, "b", rows, out);
  if (!Gated(args.key)) return;
  const size_t values = rows.size() * static_cast<size_t>(args.Int("n"));
  std::vector<double> up(values);
  ProductRows(args, "b_up", rows, up.data());
  for (size_t i = 0; i < values; ++i) out[i] = out[i] / (1.0 + std::exp(-out[i])) * up[i];
}

void DenseLeadingDims(const v1::KernelKey& key, NamedInts& ints) {
  const int64_t m = *DimSize(key, "m"), n = *DimSize(key, "n"), k = *DimSize(key, "k");
  ints["lda"] = IsColMajor(key, "a") ? m : k;
  ints["ldb"] = IsColMajor(key, "b") ? k : n;
  ints["ldc"] = n;
}

// Built apart from the spec: GCC 12 warns of a maybe-uninitialized vector
// when it is nested in the spec's designated initializer.
LaunchAbi LaunchAbiV3() {
  return {TT_LAUNCH_ABI(3, tt_gemm_args, "ops/gemm/gemm_args.h"),
          {TT_ABI_FIELD(tt_gemm_args, a, kTensor), TT_ABI_FIELD(tt_gemm_args, b, kTensor),
           TT_ABI_FIELD(tt_gemm_args, b_up, kTensor), TT_ABI_FIELD(tt_gemm_args, c, kTensor),
           TT_ABI_FIELD(tt_gemm_args, chain, kChain), TT_ABI_FIELD(tt_gemm_args, m, kInt64),
           TT_ABI_FIELD(tt_gemm_args, n, kInt64), TT_ABI_FIELD(tt_gemm_args, k, kInt64),
           TT_ABI_FIELD(tt_gemm_args, batch, kInt64), TT_ABI_FIELD(tt_gemm_args, lda, kInt64),
           TT_ABI_FIELD(tt_gemm_args, ldb, kInt64), TT_ABI_FIELD(tt_gemm_args, ldc, kInt64)}};
}

}  // namespace

bool Gated(const v1::KernelKey& key) {
  return key.gate() != v1::GATE_NONE;
}

std::optional<std::string> UnsupportedGate(const v1::KernelKey& key, std::string_view family) {
  if (!Gated(key)) return std::nullopt;
  return std::string(family) + " computes no gate (gate " + std::string(GateName(key.gate())) + ")";
}

const OpSpec& GemmOp() {
  static const OpSpec kSpec{
      .name = kOpName,
      .fusion = FusionKind::kMatmul,
      .abi = LaunchAbiV3(),
      .dims = {{"m", true, 0}, {"n", true, 0}, {"k", true, 0}, {"batch", false, 1}},
      .tensors = {{"a", TensorRole::kInput, {"batch", "m", "k"}, LayoutRule::kRowOrCol},
                  {"b", TensorRole::kInput, {"batch", "k", "n"}, LayoutRule::kRowOrCol},
                  {"c", TensorRole::kOutput, {"batch", "m", "n"}}},
      .no_prologue_reason = "its templates read A and B as stored",
      .allows_tf32 = true,
      .flops = Flops,
      .optional_tensor_bytes = OptionalTensorBytes,
      .optional_inputs = OptionalInputs,
      .leading_dims = DenseLeadingDims,
      .matmul_reference = GemmRows,
  };
  return kSpec;
}

}  // namespace tiletune::kernels::gemm
