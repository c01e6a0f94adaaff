// The sm_90a attention families as templates of the attention op
// (attention_sm90a_space.h): they serve what gpu_attention_flash serves on
// CUDA, compete with it inside the key's space (each space is empty off
// sm_90a), and are measured against its baseline.
#include "kernels/core/kernel_key.h"
#include "kernels/ops/attention/attention_op.h"
#include "kernels/ops/attention/attention_sm90a_source.h"
#include "kernels/ops/attention/attention_templates.h"

namespace tiletune::kernels::attention {
namespace {

// Grid rows: query (or KV) heads on y, batch entries on z.
constexpr int64_t kMaxGridYZ = 65535;

int64_t Dim(const v1::KernelKey& key, std::string_view name) {
  return DimSize(key, name).value_or(1);
}

Sm90aAttentionProblem ProblemOf(const v1::KernelKey& raw) {
  const v1::KernelKey key = NormalizeKernelKey(raw);
  Sm90aAttentionProblem p;
  p.batch = Dim(key, "batch");
  p.q_heads = Dim(key, "q_heads");
  p.kv_heads = Dim(key, "kv_heads");
  p.q_len = Dim(key, "q_len");
  p.kv_len = Dim(key, "kv_len");
  p.head_dim = Dim(key, "head_dim");
  p.element_bytes = key.input_dtype() == v1::DTYPE_F32 ? 4 : 2;
  p.causal = key.attention_mask() == v1::ATTENTION_MASK_CAUSAL;
  p.mask_tensor = key.attention_mask() == v1::ATTENTION_MASK_TENSOR;
  p.bshd = key.sequence_layout() == v1::SEQUENCE_LAYOUT_BSHD;
  p.write_lse = key.write_lse();
  return p;
}

using UnsupportedOf = std::optional<std::string> (*)(const Sm90aAttentionProblem&);
using SpaceOf = SearchSpace (*)(const Sm90aAttentionProblem&, const DeviceDescription&);
using SourceOf = KernelSource (*)(const v1::KernelKey&, const Sm90aAttentionProblem&,
                                  const Variant&, int64_t);

class Sm90aAttentionFamily final : public KernelTemplate {
 public:
  Sm90aAttentionFamily(std::string_view name, UnsupportedOf unsupported, SpaceOf space,
                       SourceOf source)
      : name_(name),
        unsupported_(unsupported),
        space_(space),
        source_(source),
        flash_(MakeGpuFlashAttention(gpu::kCuda)) {}

  std::string_view name() const override { return name_; }
  std::string_view backend() const override { return gpu::kCuda.backend; }

  std::optional<std::string> Unsupported(const v1::KernelKey& raw) const override {
    const v1::KernelKey key = NormalizeKernelKey(raw);
    const std::string name(name_);
    if (key.op() != kOpName) return name + " serves attention, not " + key.op();
    if (key.input_dtype() != v1::DTYPE_BF16 && key.input_dtype() != v1::DTYPE_F16) {
      return name + " takes bf16 or f16 inputs";
    }
    if (auto why = gpu::UnsupportedGpuTypes(key)) return why;
    const Sm90aAttentionProblem p = ProblemOf(key);
    if (p.q_heads > kMaxGridYZ || p.batch > kMaxGridYZ) {
      return name + " launches one grid row per head and batch entry: at most " +
             std::to_string(kMaxGridYZ) + " each";
    }
    if (auto why = unsupported_(p)) return name + ": " + *why;
    return std::nullopt;
  }

  SearchSpace Space(const v1::KernelKey& key, const DeviceDescription& device) const override {
    return space_(ProblemOf(key), device);
  }

  KernelSource Source(const v1::KernelKey& key, const Variant& variant) const override {
    return source_(NormalizeKernelKey(key), ProblemOf(key), variant, PlantedFault(variant));
  }

  Baseline BaselineFor(const v1::KernelKey& key, const DeviceDescription& device) const override {
    return flash_->BaselineFor(key, device);
  }

 private:
  const std::string_view name_;
  const UnsupportedOf unsupported_;
  const SpaceOf space_;
  const SourceOf source_;
  // Whose baseline the families share: gpu_attention_flash's.
  const std::unique_ptr<KernelTemplate> flash_;
};

}  // namespace

std::unique_ptr<KernelTemplate> MakeTmaWsAttention() {
  return std::make_unique<Sm90aAttentionFamily>(kTmaWsAttentionName, UnsupportedTmaWsAttention,
                                                TmaWsAttentionSpace, TmaWsAttentionSource);
}
std::unique_ptr<KernelTemplate> MakeDecodeAttention() {
  return std::make_unique<Sm90aAttentionFamily>(kDecodeAttentionName, UnsupportedDecodeAttention,
                                                DecodeAttentionSpace, DecodeAttentionSource);
}

}  // namespace tiletune::kernels::attention
