#include "kernels/ops/attention/attention_sm90a_source.h"

#include <cstddef>
#include <string>
#include <vector>

#include "kernels/ops/attention/attention_tma_args.h"
#include "kernels/source/gpu_source.h"

namespace tiletune::kernels::attention {
namespace {

// The layout the kernels read their argument in (attention_tma_args.h).
static_assert(offsetof(tt_attention_tma_args, attention) == 0,
              "the op's struct leads the TMA argument");
static_assert(offsetof(tt_attention_tma_args, q_map) % 64 == 0 &&
                  offsetof(tt_attention_tma_args, k_map) % 64 == 0 &&
                  offsetof(tt_attention_tma_args, v_map) % 64 == 0 && sizeof(tt_tensor_map) == 128,
              "tensor maps are 128 bytes on 64-byte boundaries");

constexpr int64_t kBoxInner = 64;  // one 128-byte swizzled row of 16-bit elements
constexpr int32_t kSwizzleBytes = 128;
constexpr int64_t kQueryBoxRows = 64;  // a consumer warpgroup's rows

Variant Tuned(const Variant& variant, std::string_view kernel_name,
              std::initializer_list<const char*> names) {
  Variant tuned;
  for (const char* name : names) tuned[name] = RequiredParam(variant, kernel_name, name);
  return tuned;
}

// The map of q, k or v (`heads` heads of `seq` positions) in the rank-3
// view the kernels read (device/attention_tma_operand.h): rows are the
// sequence, so a box of rows is a block of positions of one head.
v1::TensorMapArgument Map(const char* tensor, size_t offset, int64_t box_rows,
                          const Sm90aAttentionProblem& p, int64_t heads, int64_t seq) {
  v1::TensorMapArgument map;
  map.set_tensor(tensor);
  map.set_offset(static_cast<int64_t>(offset));
  map.set_box_inner(kBoxInner);
  map.set_box_rows(box_rows);
  map.set_swizzle_bytes(kSwizzleBytes);
  const int64_t view[3] = {p.bshd ? p.batch : p.batch * heads, seq,
                           p.bshd ? heads * p.head_dim : p.head_dim};
  for (const int64_t size : view) map.add_view(size);
  return map;
}

gpu::GpuKernelSpec::TmaArgument TmaArgument(std::vector<v1::TensorMapArgument> maps) {
  return {"tt_attention_tma_args", "attention", int64_t{sizeof(tt_attention_tma_args)},
          std::move(maps)};
}

gpu::GpuKernelSpec AttentionSpec(const v1::KernelKey& key, const Sm90aAttentionProblem& p,
                                 std::string_view kernel_name, std::string header,
                                 std::string function) {
  gpu::GpuKernelSpec spec;
  spec.kernel_name = std::string(kernel_name);
  spec.header = std::move(header);
  spec.function = std::move(function);
  spec.types = {{"in_type", gpu::DeviceType(key.input_dtype())},
                {"out_type", gpu::DeviceType(key.output_dtype())}};
  spec.flags = {{"causal", p.causal},
                {"masked", p.mask_tensor},
                {"bshd", p.bshd},
                {"write_lse", p.write_lse}};
  spec.config = {{"head_dim", p.head_dim}};
  return spec;
}

}  // namespace

KernelSource TmaWsAttentionSource(const v1::KernelKey& key, const Sm90aAttentionProblem& p,
                                  const Variant& variant, int64_t planted_fault) {
  const Variant tuned =
      Tuned(variant, kTmaWsAttentionName,
            {"block_k", "consumers", "stages", "overlap", "pingpong", "persistent"});
  gpu::GpuKernelSpec spec =
      AttentionSpec(key, p, kTmaWsAttentionName, "ops/attention/device/attention_sm90a_wgmma.h",
                    "tt::attention::tma_ws_attention");
  for (const auto& [name, value] : tuned) spec.config.emplace_back(name, value);
  const int64_t shared_bytes = TmaWsAttentionSharedBytes(p, tuned);
  spec.config.emplace_back("shared_bytes", shared_bytes);
  spec.tma_argument = TmaArgument(
      {Map("q", offsetof(tt_attention_tma_args, q_map), kQueryBoxRows, p, p.q_heads, p.q_len),
       Map("k", offsetof(tt_attention_tma_args, k_map), tuned.at("block_k"), p, p.kv_heads,
           p.kv_len),
       Map("v", offsetof(tt_attention_tma_args, v_map), tuned.at("block_k"), p, p.kv_heads,
           p.kv_len)});
  spec.entry = gpu::GpuEntry(kTmaWsAttentionName, variant);
  spec.variant_text = VariantString(variant);
  const AttentionLaunch launch = TmaWsAttentionLaunch(p, tuned);
  spec.grid = launch.grid;
  spec.blocks_per_compute_unit = launch.blocks_per_sm;
  spec.block = {TmaWsAttentionThreads(tuned), 1, 1};
  spec.shared_memory_bytes = shared_bytes;
  KernelSource source = gpu::GenerateGpuSource(key, gpu::kCuda, spec, planted_fault);
  source.compile_options.emplace_back(kArchSpecificOption);
  return source;
}

KernelSource DecodeAttentionSource(const v1::KernelKey& key, const Sm90aAttentionProblem& p,
                                   const Variant& variant, int64_t planted_fault) {
  const Variant tuned =
      Tuned(variant, kDecodeAttentionName, {"block_k", "warps_k", "stages", "split"});
  gpu::GpuKernelSpec spec = AttentionSpec(key, p, kDecodeAttentionName,
                                          "ops/attention/device/attention_decode_split_kv.h",
                                          "tt::attention::decode_attention");
  for (const auto& [name, value] : tuned) spec.config.emplace_back(name, value);
  spec.config.emplace_back("rows", DecodeRows(p));
  const int64_t shared_bytes = DecodeAttentionSharedBytes(p, tuned);
  spec.config.emplace_back("shared_bytes", shared_bytes);
  // Decode reads q itself (few rows); k and v stream by TMA.
  spec.tma_argument = TmaArgument({Map("k", offsetof(tt_attention_tma_args, k_map),
                                       tuned.at("block_k"), p, p.kv_heads, p.kv_len),
                                   Map("v", offsetof(tt_attention_tma_args, v_map),
                                       tuned.at("block_k"), p, p.kv_heads, p.kv_len)});
  const int64_t split = tuned.at("split");
  if (split > 1) {
    // The blocks that split one KV head's keys form one cluster.
    spec.entry_attributes = "__cluster_dims__(" + std::to_string(split) + ", 1, 1) ";
  }
  spec.entry = gpu::GpuEntry(kDecodeAttentionName, variant);
  spec.variant_text = VariantString(variant);
  const AttentionLaunch launch = DecodeAttentionLaunch(p, tuned);
  spec.grid = launch.grid;
  spec.blocks_per_compute_unit = launch.blocks_per_sm;
  spec.block = {DecodeAttentionThreads(p, tuned), 1, 1};
  spec.shared_memory_bytes = shared_bytes;
  KernelSource source = gpu::GenerateGpuSource(key, gpu::kCuda, spec, planted_fault);
  source.compile_options.emplace_back(kArchSpecificOption);
  return source;
}

}  // namespace tiletune::kernels::attention
