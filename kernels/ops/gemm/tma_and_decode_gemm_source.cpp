#include "kernels/ops/gemm/tma_and_decode_gemm_source.h"

#include <cstddef>

#include "kernels/core/kernel_key.h"
#include "kernels/ops/gemm/gemm_args.h"
#include "kernels/ops/gemm/tile_gemm_source.h"

namespace tiletune::kernels::gemm {
namespace {

// The layout the TMA kernels read their argument in (ops/gemm/gemm_args.h).
static_assert(offsetof(tt_gemm_tma_args, gemm) == 0, "the op's struct leads the TMA argument");
static_assert(offsetof(tt_gemm_tma_args, a_map) % 64 == 0 &&
                  offsetof(tt_gemm_tma_args, b_map) % 64 == 0 &&
                  offsetof(tt_gemm_tma_args, c_map) % 64 == 0 &&
                  offsetof(tt_gemm_tma_args, b_up_map) % 64 == 0 && sizeof(tt_tensor_map) == 128,
              "tensor maps are 128 bytes on 64-byte boundaries");

// A k box is one 128-byte swizzled row: kBoxK 16-bit elements (the decode
// families), 128 / element bytes for tma_ws_gemm; an N-major B panel is
// 128 bytes of n.
constexpr int32_t kSwizzleBytes = 128;
constexpr int64_t kBoxK = 64;
constexpr int64_t kPanelColumns = 64;
constexpr int64_t kWarpgroupThreads = 128;

// The variant's own parameters, without planted_fault.
Variant Tuned(const Variant& variant, std::string_view kernel_name,
              std::initializer_list<const char*> names) {
  Variant tuned;
  for (const char* name : names) tuned[name] = RequiredParam(variant, kernel_name, name);
  return tuned;
}

v1::TensorMapArgument Map(const char* tensor, size_t offset, int64_t box_inner, int64_t box_rows) {
  v1::TensorMapArgument map;
  map.set_tensor(tensor);
  map.set_offset(static_cast<int64_t>(offset));
  map.set_box_inner(box_inner);
  map.set_box_rows(box_rows);
  map.set_swizzle_bytes(kSwizzleBytes);
  return map;
}

gpu::GpuKernelSpec::TmaArgument TmaArgument(std::vector<v1::TensorMapArgument> maps) {
  return {"tt_gemm_tma_args", "gemm", int64_t{sizeof(tt_gemm_tma_args)}, std::move(maps)};
}

int64_t CeilDiv(int64_t a, int64_t b) {
  return (a + b - 1) / b;
}

}  // namespace

KernelSource TmaWsGemmSource(const v1::KernelKey& raw, const GemmTarget& target,
                             const Variant& variant, int64_t planted_fault) {
  const v1::KernelKey key = NormalizeKernelKey(raw);
  const GemmProblem p = ProblemOf(key);
  const Variant tuned = Tuned(variant, kTmaWsGemmName,
                              {"block_m", "block_n", "stages", "group_m", "store_tma", "store_ring",
                               "pingpong", "cluster_m"});
  gpu::GpuKernelSpec spec = GemmSpec(key, p, kTmaWsGemmName, "ops/gemm/device/gemm_sm90a_tma_ws.h",
                                     "tt::gemm::tma_ws_gemm");
  const int64_t bm = tuned.at("block_m"), bn = tuned.at("block_n");
  const int64_t cluster_m = tuned.at("cluster_m");
  constexpr int64_t consumers = 2;
  spec.config = {{"block_m", bm},
                 {"block_n", bn},
                 {"consumers", consumers},
                 {"stages", tuned.at("stages")},
                 {"group_m", tuned.at("group_m")},
                 {"cluster_m", cluster_m},
                 {"shared_bytes", TmaWsGemmSharedBytes(p, tuned)}};
  const bool store_tma = tuned.at("store_tma") != 0;
  spec.flags.emplace_back("store_tma", store_tma);
  spec.flags.emplace_back("store_ring", tuned.at("store_ring") != 0);
  spec.flags.emplace_back("out_aligned", p.ldc % target.store_run == 0);
  spec.flags.emplace_back("pingpong", tuned.at("pingpong") != 0);
  // k boxes of 128 bytes; B row-major comes in panels of 64 k rows by 64 columns.
  const int64_t box_k = kSwizzleBytes / p.element_bytes;
  // A gate stacks b's boxes (or panels) above as many of b_up's, each half
  // the tile's N; a cluster's two blocks fetch half of a K-major B tile each.
  const int64_t out_n = TmaOutColumns(p, bn);
  const int64_t b_box_rows = p.gated || cluster_m > 1 ? bn / 2 : bn;
  auto b_map = [&](const char* tensor, size_t offset) {
    return p.b_col_major ? Map(tensor, offset, box_k, b_box_rows)
                         : Map(tensor, offset, kPanelColumns, box_k);
  };
  std::vector<v1::TensorMapArgument> maps = {Map("a", offsetof(tt_gemm_tma_args, a_map), box_k, bm),
                                             b_map("b", offsetof(tt_gemm_tma_args, b_map))};
  if (p.gated) maps.push_back(b_map("b_up", offsetof(tt_gemm_tma_args, b_up_map)));
  if (store_tma) {
    // The consumers' staging boxes: 128 bytes of C a row, one consumer's rows.
    maps.push_back(Map("c", offsetof(tt_gemm_tma_args, c_map), 128 / p.out_element_bytes,
                       TmaWsConsumerRows(tuned)));
  }
  spec.tma_argument = TmaArgument(std::move(maps));
  spec.entry = gpu::GpuEntry(kTmaWsGemmName, variant);
  spec.variant_text = VariantString(variant);
  // Persistent: at most one block an SM, striding over the tiles; clusters
  // take cluster_m row tiles at once.
  if (cluster_m > 1) {
    spec.entry_attributes = "__cluster_dims__(" + std::to_string(cluster_m) + ", 1, 1) ";
  }
  spec.grid = {CeilDiv(p.m, bm * cluster_m) * cluster_m * CeilDiv(p.n, out_n) * p.batch, 1, 1};
  spec.blocks_per_compute_unit = 1;
  spec.block = {(1 + consumers) * kWarpgroupThreads, 1, 1};
  spec.shared_memory_bytes = TmaWsGemmSharedBytes(p, tuned);
  KernelSource source = gpu::GenerateGpuSource(key, target.vendor, spec, planted_fault);
  source.compile_options.emplace_back(kArchSpecificOption);
  return source;
}

KernelSource TmaDecodeGemmSource(const v1::KernelKey& raw, const GemmTarget& target,
                                 const Variant& variant, int64_t planted_fault) {
  const v1::KernelKey key = NormalizeKernelKey(raw);
  const GemmProblem p = ProblemOf(key);
  const Variant tuned =
      Tuned(variant, kTmaDecodeGemmName, {"block_w", "m_pad", "k_boxes", "stages", "split_k"});
  gpu::GpuKernelSpec spec =
      GemmSpec(key, p, kTmaDecodeGemmName, "ops/gemm/device/gemm_sm90a_tma_decode.h",
               "tt::gemm::tma_decode_gemm");
  const int64_t bw = tuned.at("block_w"), split = tuned.at("split_k");
  for (const char* name : {"block_w", "m_pad", "k_boxes", "stages", "split_k"}) {
    spec.config.emplace_back(name, tuned.at(name));
  }
  spec.config.emplace_back("shared_bytes", TmaDecodeGemmSharedBytes(tuned));
  // A gate stacks a box of b and one of b_up, each half the block's weight rows.
  const int64_t out_w = TmaOutColumns(p, bw);
  std::vector<v1::TensorMapArgument> maps = {
      Map("a", offsetof(tt_gemm_tma_args, a_map), kBoxK, tuned.at("m_pad")),
      Map("b", offsetof(tt_gemm_tma_args, b_map), kBoxK, out_w)};
  if (p.gated) maps.push_back(Map("b_up", offsetof(tt_gemm_tma_args, b_up_map), kBoxK, out_w));
  spec.tma_argument = TmaArgument(std::move(maps));
  if (split > 1) {
    // The blocks that split a tile's k form one cluster.
    spec.entry_attributes = "__cluster_dims__(" + std::to_string(split) + ", 1, 1) ";
  }
  spec.entry = gpu::GpuEntry(kTmaDecodeGemmName, variant);
  spec.variant_text = VariantString(variant);
  spec.grid = {CeilDiv(p.n, out_w) * split, 1, p.batch};
  spec.block = {kWarpgroupThreads, 1, 1};
  spec.shared_memory_bytes = TmaDecodeGemmSharedBytes(tuned);
  KernelSource source = gpu::GenerateGpuSource(key, target.vendor, spec, planted_fault);
  source.compile_options.emplace_back(kArchSpecificOption);
  return source;
}

KernelSource MmaDecodeGemmSource(const v1::KernelKey& raw, const GemmTarget& target,
                                 const Variant& variant, int64_t planted_fault) {
  const v1::KernelKey key = NormalizeKernelKey(raw);
  const GemmProblem p = ProblemOf(key);
  const Variant tuned =
      Tuned(variant, kMmaDecodeGemmName, {"m_tiles", "warp_rows", "warps_n", "warps_k", "unroll"});
  gpu::GpuKernelSpec spec = GemmSpec(key, p, kMmaDecodeGemmName,
                                     "ops/gemm/device/gemm_decode_mma.h", "tt::gemm::decode_gemm");
  for (const char* name : {"m_tiles", "warp_rows", "warps_n", "warps_k", "unroll"}) {
    spec.config.emplace_back(name, tuned.at(name));
  }
  spec.config.emplace_back("shared_bytes", MmaDecodeGemmSharedBytes(tuned));
  spec.entry = gpu::GpuEntry(kMmaDecodeGemmName, variant);
  spec.variant_text = VariantString(variant);
  const int64_t block_n = 8 * tuned.at("warp_rows") * tuned.at("warps_n");
  spec.grid = {CeilDiv(p.n, block_n), 1, p.batch};
  spec.block = {tuned.at("warps_n") * tuned.at("warps_k") * target.vendor.warp_size, 1, 1};
  spec.shared_memory_bytes = MmaDecodeGemmSharedBytes(tuned);
  return gpu::GenerateGpuSource(key, target.vendor, spec, planted_fault);
}

}  // namespace tiletune::kernels::gemm
