#include "kernels/ops/attention/attention_op.h"

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <limits>
#include <vector>

#include "kernels/core/kernel_key.h"
#include "kernels/ops/attention/attention_args.h"

namespace tiletune::kernels::attention {
namespace {

int64_t Dim(const v1::KernelKey& key, std::string_view name) {
  return DimSize(key, name).value_or(1);
}

// Two matmuls of 2 * head_dim flops per visible (query, key) pair; the
// softmax's few operations per pair are left out, as FlashAttention counts.
int64_t Flops(const v1::KernelKey& key) {
  return 4 * Dim(key, "batch") * Dim(key, "q_heads") * VisiblePairs(key) * Dim(key, "head_dim");
}

// The mask's elements in the input dtype and lse's in f32, where the key
// has them.
int64_t OptionalTensorBytes(const v1::KernelKey& key) {
  const int64_t rows = Dim(key, "batch") * Dim(key, "q_heads") * Dim(key, "q_len");
  const bool half = key.input_dtype() == v1::DTYPE_F16 || key.input_dtype() == v1::DTYPE_BF16;
  int64_t bytes = key.write_lse() ? rows * 4 : 0;
  if (key.attention_mask() == v1::ATTENTION_MASK_TENSOR) {
    bytes += rows * Dim(key, "kv_len") * (half ? 2 : 4);
  }
  return bytes;
}

// The additive mask where the key has one: dense [batch][q_heads][q_len]
// [kv_len], one key in 5 hidden (-inf), so some rows of short keys see none.
std::vector<OptionalInput> OptionalInputs(const v1::KernelKey& key) {
  if (key.attention_mask() != v1::ATTENTION_MASK_TENSOR) return {};
  return {
      {.name = "mask",
       .elements = Dim(key, "batch") * Dim(key, "q_heads") * Dim(key, "q_len") * Dim(key, "kv_len"),
       .hidden_every = 5}};
}

std::optional<std::pair<std::string, std::string>> Rules(const v1::KernelKey& key) {
  const auto at = [&](std::string_view name) {
    for (int i = 0; i < key.shape_size(); ++i) {
      if (key.shape(i).name() == name) return "shape[" + std::to_string(i) + "].size";
    }
    return std::string("shape");
  };
  const int64_t head_dim = Dim(key, "head_dim");
  if (std::find(std::begin(kHeadDims), std::end(kHeadDims), head_dim) == std::end(kHeadDims)) {
    return std::pair{at("head_dim"),
                     "head_dim must be 64, 128 or 256, got " + std::to_string(head_dim)};
  }
  const int64_t q_heads = Dim(key, "q_heads"), kv_heads = Dim(key, "kv_heads");
  if (q_heads % kv_heads != 0) {
    return std::pair{at("kv_heads"), "q_heads (" + std::to_string(q_heads) +
                                         ") is not a multiple of kv_heads (" +
                                         std::to_string(kv_heads) + ")"};
  }
  if (!v1::AttentionMask_IsValid(key.attention_mask())) {
    return std::pair{std::string("attention_mask"), "is not a known mask kind"};
  }
  if (!v1::SequenceLayout_IsValid(key.sequence_layout())) {
    return std::pair{std::string("sequence_layout"), "must be bshd or bhsd"};
  }
  return std::nullopt;
}

// A tensor's element strides (batch, seq, head) when stored densely in the
// key's layout with `seq` positions and `heads` heads.
struct Strides {
  int64_t batch, seq, head;
};

Strides DenseStrides(const v1::KernelKey& key, int64_t seq, int64_t heads) {
  const int64_t d = Dim(key, "head_dim");
  if (key.sequence_layout() == v1::SEQUENCE_LAYOUT_BHSD) return {heads * seq * d, d, seq * d};
  return {seq * heads * d, heads * d, d};
}

void DenseLeadingDims(const v1::KernelKey& key, NamedInts& ints) {
  const int64_t q_len = Dim(key, "q_len"), kv_len = Dim(key, "kv_len");
  const int64_t q_heads = Dim(key, "q_heads"), kv_heads = Dim(key, "kv_heads");
  const auto put = [&](const std::string& tensor, Strides s) {
    ints[tensor + "_batch_stride"] = s.batch;
    ints[tensor + "_seq_stride"] = s.seq;
    ints[tensor + "_head_stride"] = s.head;
  };
  put("q", DenseStrides(key, q_len, q_heads));
  put("k", DenseStrides(key, kv_len, kv_heads));
  put("v", DenseStrides(key, kv_len, kv_heads));
  put("o", DenseStrides(key, q_len, q_heads));
  // A dense [batch][q_heads][q_len][kv_len] mask where the key has one.
  const bool mask = key.attention_mask() == v1::ATTENTION_MASK_TENSOR;
  ints["mask_batch_stride"] = mask ? q_heads * q_len * kv_len : 0;
  ints["mask_head_stride"] = mask ? q_len * kv_len : 0;
  ints["mask_q_stride"] = mask ? kv_len : 0;
}

// The (batch, query position, head) of row `row` of o as o is stored
// densely in the key's layout.
struct RowPosition {
  int64_t b, i, h;
};

RowPosition PositionOf(const ReferenceArgs& args, int64_t row) {
  const int64_t q_heads = args.Int("q_heads"), q_len = args.Int("q_len");
  const bool bhsd = args.key.sequence_layout() == v1::SEQUENCE_LAYOUT_BHSD;
  return {.b = row / (q_len * q_heads),
          .i = bhsd ? row % q_len : row / q_heads % q_len,
          .h = bhsd ? row / q_len % q_heads : row % q_heads};
}

// lse is [batch][q_heads][q_len], dense, whatever o's layout.
int64_t LseElement(const ReferenceArgs& args, int64_t row) {
  const RowPosition p = PositionOf(args, row);
  return (p.b * args.Int("q_heads") + p.h) * args.Int("q_len") + p.i;
}

// Rows of o, each one (batch, query position, head) as o is stored densely,
// into `out` (rows.size() x head_dim): the scores in float64, a max-shifted
// softmax, then the weighted sum of v; and, where `lse` is not null, each
// row's log-sum-exp.
void AttentionRows(const ReferenceArgs& args, std::span<const int64_t> rows, double* out,
                   double* lse) {
  const int64_t q_heads = args.Int("q_heads"), kv_heads = args.Int("kv_heads");
  const int64_t q_len = args.Int("q_len"), kv_len = args.Int("kv_len");
  const int64_t d = args.Int("head_dim");
  const double scale = args.Float("scale");
  const bool causal = args.key.attention_mask() == v1::ATTENTION_MASK_CAUSAL;
  const bool masked = args.key.attention_mask() == v1::ATTENTION_MASK_TENSOR;
  const std::span<const float> q = args.Tensor("q"), k = args.Tensor("k"), v = args.Tensor("v");
  const std::span<const float> mask = masked ? args.Tensor("mask") : std::span<const float>{};
  const auto at = [&](std::string_view tensor, int64_t b, int64_t s, int64_t h) {
    const std::string t(tensor);
    return b * args.Int(t + "_batch_stride") + s * args.Int(t + "_seq_stride") +
           h * args.Int(t + "_head_stride");
  };
  std::vector<double> scores(static_cast<size_t>(kv_len));
  for (size_t r = 0; r < rows.size(); ++r) {
    const auto [b, i, h] = PositionOf(args, rows[r]);
    const int64_t g = h / (q_heads / kv_heads);
    // Keys past `visible` are hidden by the bottom-right aligned causal mask.
    const int64_t visible =
        causal ? std::clamp<int64_t>(i + kv_len - q_len + 1, 0, kv_len) : kv_len;
    const float* qi = q.data() + at("q", b, i, h);
    double max = -std::numeric_limits<double>::infinity();
    for (int64_t j = 0; j < visible; ++j) {
      const float* kj = k.data() + at("k", b, j, g);
      double dot = 0;
      for (int64_t c = 0; c < d; ++c) dot += static_cast<double>(qi[c]) * kj[c];
      double s = scale * dot;
      if (masked) {
        s += mask[static_cast<size_t>(b * args.Int("mask_batch_stride") +
                                      h * args.Int("mask_head_stride") +
                                      i * args.Int("mask_q_stride") + j)];
      }
      scores[static_cast<size_t>(j)] = s;
      max = std::max(max, s);
    }
    double* o = out + static_cast<int64_t>(r) * d;
    std::fill(o, o + d, 0.0);
    // A row that sees no key (or only -inf scores) is all zeros, its lse
    // -inf.
    if (lse) lse[r] = max;
    if (max == -std::numeric_limits<double>::infinity()) continue;
    double sum = 0;
    for (int64_t j = 0; j < visible; ++j) {
      const double p = std::exp(scores[static_cast<size_t>(j)] - max);
      sum += p;
      const float* vj = v.data() + at("v", b, j, g);
      for (int64_t c = 0; c < d; ++c) o[c] += p * vj[c];
    }
    for (int64_t c = 0; c < d; ++c) o[c] /= sum;
    if (lse) lse[r] = max + std::log(sum);
  }
}

// Built apart from the spec: GCC 12 warns of a maybe-uninitialized vector
// when it is nested in the spec's designated initializer.
LaunchAbi LaunchAbiV2() {
#define FIELD(name, kind) TT_ABI_FIELD(tt_attention_args, name, kind)
  return {TT_LAUNCH_ABI(2, tt_attention_args, "ops/attention/attention_args.h"),
          {FIELD(q, kTensor),
           FIELD(k, kTensor),
           FIELD(v, kTensor),
           FIELD(mask, kTensor),
           FIELD(o, kTensor),
           FIELD(lse, kTensor),
           FIELD(chain, kChain),
           FIELD(batch, kInt64),
           FIELD(q_heads, kInt64),
           FIELD(kv_heads, kInt64),
           FIELD(q_len, kInt64),
           FIELD(kv_len, kInt64),
           FIELD(head_dim, kInt64),
           FIELD(q_batch_stride, kInt64),
           FIELD(q_seq_stride, kInt64),
           FIELD(q_head_stride, kInt64),
           FIELD(k_batch_stride, kInt64),
           FIELD(k_seq_stride, kInt64),
           FIELD(k_head_stride, kInt64),
           FIELD(v_batch_stride, kInt64),
           FIELD(v_seq_stride, kInt64),
           FIELD(v_head_stride, kInt64),
           FIELD(o_batch_stride, kInt64),
           FIELD(o_seq_stride, kInt64),
           FIELD(o_head_stride, kInt64),
           FIELD(mask_batch_stride, kInt64),
           FIELD(mask_head_stride, kInt64),
           FIELD(mask_q_stride, kInt64),
           FIELD(scale, kFloat32)}};
#undef FIELD
}

}  // namespace

int64_t VisiblePairs(const v1::KernelKey& key) {
  const int64_t q_len = Dim(key, "q_len"), kv_len = Dim(key, "kv_len");
  if (key.attention_mask() != v1::ATTENTION_MASK_CAUSAL) return q_len * kv_len;
  int64_t pairs = 0;
  for (int64_t i = 0; i < q_len; ++i) {
    pairs += std::clamp<int64_t>(i + kv_len - q_len + 1, 0, kv_len);
  }
  return pairs;
}

const OpSpec& AttentionOp() {
  // The tensors' dims are listed in BSHD order; a BHSD key stores the same
  // elements with its heads outside its sequence (the strides say which).
  // The mask and lse are ABI fields beside them, present where the key asks.
  static const OpSpec kSpec{
      .name = kOpName,
      .fusion = FusionKind::kAttention,
      .abi = LaunchAbiV2(),
      .dims = {{"batch", false, 1},
               {"q_heads", true, 0},
               {"kv_heads", true, 0},
               {"q_len", true, 0},
               {"kv_len", true, 0},
               {"head_dim", true, 0}},
      .tensors = {{"q", TensorRole::kInput, {"batch", "q_len", "q_heads", "head_dim"}},
                  {"k", TensorRole::kInput, {"batch", "kv_len", "kv_heads", "head_dim"}},
                  {"v", TensorRole::kInput, {"batch", "kv_len", "kv_heads", "head_dim"}},
                  {"o", TensorRole::kOutput, {"batch", "q_len", "q_heads", "head_dim"}}},
      .no_prologue_reason = "its kernels read q, k and v as stored",
      .key_rules = Rules,
      .flops = Flops,
      .optional_tensor_bytes = OptionalTensorBytes,
      .optional_inputs = OptionalInputs,
      .leading_dims = DenseLeadingDims,
      .scalars = {{"scale", kValidationScale}},
      .attention_reference = AttentionRows,
      .row_values =
          RowValuesOutput{.field = "lse",
                          .written = [](const v1::KernelKey& key) { return key.write_lse(); },
                          .element = LseElement},
  };
  return kSpec;
}

}  // namespace tiletune::kernels::attention
