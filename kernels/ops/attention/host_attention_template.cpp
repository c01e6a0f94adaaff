// The host attention template and its baseline (ops/attention/cpu/
// attention_rows.h).
#include "kernels/core/kernel_key.h"
#include "kernels/ops/attention/attention_op.h"
#include "kernels/ops/attention/attention_templates.h"
#include "kernels/source/host_source.h"

namespace tiletune::kernels::attention {
namespace {

using host::GenerateHostSource;
using host::HostKernelSpec;
using host::HostThreadCounts;
using host::kHostBaselineName;
using host::UnsupportedHostTypes;

constexpr std::string_view kName = "host_attention_online";

// Keys of a block beyond kv_len only cost work: a block may exceed kv_len
// up to kv_len rounded up to the smallest block.
constexpr int64_t kMinBlockKv = 32;

int64_t RoundUp(int64_t value, int64_t multiple) {
  return (value + multiple - 1) / multiple * multiple;
}

HostKernelSpec Spec(const v1::KernelKey& key, std::string function, std::string kernel_name) {
  HostKernelSpec spec;
  spec.kernel_name = std::move(kernel_name);
  spec.header = "ops/attention/cpu/attention_rows.h";
  spec.function = std::move(function);
  spec.config = {{"head_dim", DimSize(key, "head_dim").value_or(0)},
                 {"causal", key.attention_mask() == v1::ATTENTION_MASK_CAUSAL ? 1 : 0},
                 {"write_lse", key.write_lse() ? 1 : 0},
                 {"masked", key.attention_mask() == v1::ATTENTION_MASK_TENSOR ? 1 : 0}};
  spec.output_elements = "args->batch * args->q_heads * args->q_len * args->head_dim";
  return spec;
}

class HostAttention final : public KernelTemplate {
 public:
  std::string_view name() const override { return kName; }
  std::string_view backend() const override { return "host"; }

  std::optional<std::string> Unsupported(const v1::KernelKey& key) const override {
    if (key.op() != kOpName) return std::string(kName) + " serves attention, not " + key.op();
    return UnsupportedHostTypes(key);
  }

  SearchSpace Space(const v1::KernelKey& key, const DeviceDescription& device) const override {
    const int64_t q_len = DimSize(key, "q_len").value_or(1);
    const int64_t kv_len = DimSize(key, "kv_len").value_or(1);
    const int64_t heads = DimSize(key, "batch").value_or(1) * DimSize(key, "q_heads").value_or(1);
    SearchSpace space;
    space.Add("block_q", {1, 4, 8, 16})
        .Add("block_kv", {32, 64, 128})
        .Add("threads", HostThreadCounts(device));
    space.Require("block_q <= q_len (or 1)", [q_len](const Variant& v) {
      return v.at("block_q") <= std::max<int64_t>(1, q_len);
    });
    space.Require("block_kv <= kv_len rounded up to 32", [kv_len](const Variant& v) {
      return v.at("block_kv") <= RoundUp(kv_len, kMinBlockKv);
    });
    space.Require("a second thread needs at least two tasks", [=](const Variant& v) {
      return v.at("threads") == 1 || heads * ((q_len + v.at("block_q") - 1) / v.at("block_q")) >= 2;
    });
    return space;
  }

  KernelSource Source(const v1::KernelKey& key, const Variant& variant) const override {
    HostKernelSpec spec = Spec(key, "tt::attention_online", std::string(kName));
    for (const char* p : {"block_q", "block_kv"}) {
      spec.config.emplace_back(p, RequiredParam(variant, kName, p));
    }
    spec.threads = static_cast<int>(RequiredParam(variant, kName, "threads"));
    spec.config.emplace_back("threads", spec.threads);
    return GenerateHostSource(key, spec, PlantedFault(variant));
  }

  Baseline BaselineFor(const v1::KernelKey& key, const DeviceDescription&) const override {
    return {kHostBaselineName,
            GenerateHostSource(key, Spec(key, "tt::attention_naive", kHostBaselineName))};
  }
};

}  // namespace

std::unique_ptr<KernelTemplate> MakeHostAttention() {
  return std::make_unique<HostAttention>();
}

}  // namespace tiletune::kernels::attention
