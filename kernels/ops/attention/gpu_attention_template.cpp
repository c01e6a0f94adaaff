// The GPU flash attention template (ops/attention/device/
// attention_flash_mma.h) on one vendor, through the tile library's warp MMA
// leaf (mma.sync on NVIDIA, MFMA wave64 on AMD), and its baseline, the
// warp-per-query kernel (attention_warp_rows.h).
#include <algorithm>

#include "kernels/core/kernel_key.h"
#include "kernels/ops/attention/attention_op.h"
#include "kernels/ops/attention/attention_templates.h"

namespace tiletune::kernels::attention {
namespace {

constexpr std::string_view kBaselineName = "gpu_attention_warp_rows";
// Launch limits of grid y and z (query heads, batch entries).
constexpr int64_t kMaxGridYZ = 65535;
// Registers a lane keeps besides its live tiles (addresses, loop state,
// the operands in flight): what ptxas was seen to need beyond 168 of 255.
constexpr int64_t kOtherRegisters = 87;
constexpr int64_t kBaselineWarps = 4;
constexpr int64_t kMinBlockThreads = 128;
// Where O (16 query rows x head_dim in f32) takes more registers a lane
// than this, Q's fragments are read from shared memory each key tile
// rather than held (q_in_registers).
constexpr int64_t kMaxOutputRegistersBesideQ = 96;

int64_t Dim(const v1::KernelKey& key, std::string_view name) {
  return DimSize(key, name).value_or(1);
}

int64_t RoundUp(int64_t value, int64_t multiple) {
  return (value + multiple - 1) / multiple * multiple;
}

int64_t ElementBytes(v1::DType dtype) {
  return dtype == v1::DTYPE_F32 ? 4 : 2;
}

// Shared memory of a variant: the Q tile and `stages` K and V tiles.
int64_t SharedBytes(const v1::KernelKey& key, const Variant& v) {
  const int64_t d = Dim(key, "head_dim"), bytes = ElementBytes(key.input_dtype());
  return v.at("block_q") * d * bytes + 2 * v.at("stages") * v.at("block_kv") * d * bytes;
}

// Whether Q's fragments stay in registers (see kMaxOutputRegistersBesideQ).
bool QInRegisters(const v1::KernelKey& key, const gpu::GpuVendor& vendor) {
  return 16 * Dim(key, "head_dim") / vendor.warp_size <= kMaxOutputRegistersBesideQ;
}

// Registers per lane of the live tiles: O and S in f32, Q (where it stays
// in registers) and P in 16-bit pairs. LLVM's AMDGPU scheduler also issues every LDS read of a key
// tile's operands (block_kv x head_dim, 16-bit pairs) ahead of its MFMAs, so on CDNA those count
// too (gfx950's 128x128 tiles on 8 waves spilled without).
int64_t TileRegisters(const v1::KernelKey& key, const Variant& v, const gpu::GpuVendor& vendor) {
  const int64_t d = Dim(key, "head_dim"), tm = v.at("block_q") / v.at("warps");
  const int64_t kv = v.at("block_kv");
  const int64_t operands = vendor.backend == "hip" ? kv * d / 2 : 0;
  const int64_t q = QInRegisters(key, vendor) ? tm * d / 2 : 0;
  return (tm * d + tm * kv + q + tm * kv / 2 + operands) / vendor.warp_size;
}

gpu::GpuKernelSpec Spec(const v1::KernelKey& key, std::string kernel_name, std::string entry,
                        std::string header, std::string function) {
  const v1::KernelKey k = NormalizeKernelKey(key);
  gpu::GpuKernelSpec spec;
  spec.kernel_name = std::move(kernel_name);
  spec.entry = std::move(entry);
  spec.header = std::move(header);
  spec.function = std::move(function);
  spec.types = {{"in_type", gpu::DeviceType(k.input_dtype())},
                {"out_type", gpu::DeviceType(k.output_dtype())}};
  spec.flags = {{"causal", k.attention_mask() == v1::ATTENTION_MASK_CAUSAL},
                {"masked", k.attention_mask() == v1::ATTENTION_MASK_TENSOR},
                {"write_lse", k.write_lse()}};
  spec.config = {{"head_dim", Dim(k, "head_dim")}};
  return spec;
}

class GpuFlashAttention final : public KernelTemplate {
 public:
  explicit GpuFlashAttention(const gpu::GpuVendor& vendor)
      : vendor_(vendor), name_("gpu_attention_flash") {}

  std::string_view name() const override { return name_; }
  std::string_view backend() const override { return vendor_.backend; }

  std::optional<std::string> Unsupported(const v1::KernelKey& raw) const override {
    const v1::KernelKey key = NormalizeKernelKey(raw);
    if (key.op() != kOpName) return name_ + " serves attention, not " + key.op();
    if (key.input_dtype() != v1::DTYPE_BF16 && key.input_dtype() != v1::DTYPE_F16) {
      return name_ + " takes bf16 or f16 inputs (the tensor cores' operands), not " +
             std::string(DTypeName(key.input_dtype()));
    }
    if (auto why = gpu::UnsupportedGpuTypes(key)) return why;
    if (Dim(key, "q_heads") > kMaxGridYZ || Dim(key, "batch") > kMaxGridYZ) {
      return name_ + " launches one grid row per query head and batch entry: at most " +
             std::to_string(kMaxGridYZ) + " each";
    }
    return std::nullopt;
  }

  SearchSpace Space(const v1::KernelKey& key, const DeviceDescription& device) const override {
    const int64_t q_len = Dim(key, "q_len"), kv_len = Dim(key, "kv_len");
    SearchSpace space;
    // Blocks of 32 queries (2 waves of 64) fit head_dim 256 in 64 KiB of
    // LDS and waste less of a short query block.
    space.Add("block_q", {32, 64, 128})
        .Add("block_kv", {16, 32, 64, 128})
        .Add("warps", {2, 4, 8})
        .Add("stages", {2, 3});
    space.Require("block_q / warps is 16 or 32 query rows", [](const Variant& v) {
      const int64_t tm = v.at("block_q") / v.at("warps");
      return v.at("block_q") % v.at("warps") == 0 && (tm == 16 || tm == 32);
    });
    // Fewer threads copy more chunks each, holding an address apiece: blocks
    // of 64 threads (2 warps of 32) spilled on sm_90.
    const int64_t min_warps = kMinBlockThreads / vendor_.warp_size;
    space.Require("at least " + std::to_string(kMinBlockThreads) + " threads a block",
                  [min_warps](const Variant& v) { return v.at("warps") >= min_warps; });
    const int64_t smallest_block_q = 16 * min_warps;
    space.Require("block_q <= q_len rounded up to 32, or the smallest block (" +
                      std::to_string(smallest_block_q) + ")",
                  [q_len, smallest_block_q](const Variant& v) {
                    return v.at("block_q") <= std::max(RoundUp(q_len, 32), smallest_block_q);
                  });
    space.Require("block_kv <= kv_len rounded up to 32",
                  [kv_len](const Variant& v) { return v.at("block_kv") <= RoundUp(kv_len, 32); });
    const int64_t shared = device.max_shared_bytes_per_block;
    // Tiles of 16 keys only where 32-key tiles in two stages beside the
    // smallest query block overflow shared memory (head_dim 256 in 64 KiB
    // of LDS), where one MMA k step is 16 keys, and with warp tiles of 16
    // query rows (at 32, O and Q of head_dim 256 spilled on gfx90a).
    const bool short_tiles =
        SharedBytes(key, {{"block_q", smallest_block_q}, {"block_kv", 32}, {"stages", 2}}) >
            shared &&
        device.mma_k <= 16;
    space.Require(
        "block_kv 16 only where 32-key tiles in two stages do not fit shared memory, with 16 "
        "query rows a warp",
        [short_tiles](const Variant& v) {
          return v.at("block_kv") > 16 || (short_tiles && v.at("block_q") / v.at("warps") == 16);
        });
    space.Require("Q and the K/V stages fit the device's shared memory",
                  [key, shared](const Variant& v) { return SharedBytes(key, v) <= shared; });
    space.Require("the live tiles fit the registers a lane of the block gets",
                  [key, device, vendor = vendor_](const Variant& v) {
                    const int64_t threads = v.at("warps") * vendor.warp_size;
                    return TileRegisters(key, v, vendor) + kOtherRegisters <=
                           RegistersPerLane(device, threads);
                  });
    return space;
  }

  KernelSource Source(const v1::KernelKey& key, const Variant& variant) const override {
    gpu::GpuKernelSpec spec =
        Spec(key, name_, gpu::GpuEntry(name_, variant),
             "ops/attention/device/attention_flash_mma.h", "tt::attention::flash_attention");
    Variant v;
    for (const char* p : {"block_q", "block_kv", "warps", "stages"}) {
      v[p] = RequiredParam(variant, name_, p);
      spec.config.emplace_back(p, v[p]);
    }
    spec.flags.emplace_back("q_in_registers", QInRegisters(key, vendor_));
    const int64_t shared = SharedBytes(key, v);
    spec.config.emplace_back("shared_bytes", shared);
    spec.shared_memory_bytes = shared;
    spec.grid = {(Dim(key, "q_len") + v["block_q"] - 1) / v["block_q"], Dim(key, "q_heads"),
                 Dim(key, "batch")};
    spec.block = {v["warps"] * vendor_.warp_size, 1, 1};
    return gpu::GenerateGpuSource(key, vendor_, spec, PlantedFault(variant));
  }

  Baseline BaselineFor(const v1::KernelKey& key, const DeviceDescription&) const override {
    gpu::GpuKernelSpec spec =
        Spec(key, std::string(kBaselineName), "tiletune_" + std::string(kBaselineName),
             "ops/attention/device/attention_warp_rows.h", "tt::attention::attention_warp_rows");
    spec.config.emplace_back("warps", kBaselineWarps);
    const int64_t rows = Dim(key, "batch") * Dim(key, "q_heads") * Dim(key, "q_len");
    spec.grid = {(rows + kBaselineWarps - 1) / kBaselineWarps, 1, 1};
    spec.block = {kBaselineWarps * vendor_.warp_size, 1, 1};
    Baseline baseline{std::string(kBaselineName), gpu::GenerateGpuSource(key, vendor_, spec)};
    // Measured on an H100 (bench/results/2026-12-06-h100-attention-vs-torch.md):
    // torch's own SDPA call (cuDNN) beat every served flash kernel.
    baseline.vendor_gap =
        "users' own attention (torch SDPA: cuDNN, FlashAttention) has no call in the daemon; "
        "its baseline is a straightforward kernel";
    return baseline;
  }

 private:
  gpu::GpuVendor vendor_;
  std::string name_;
};

}  // namespace

std::unique_ptr<KernelTemplate> MakeGpuFlashAttention(const gpu::GpuVendor& vendor) {
  return std::make_unique<GpuFlashAttention>(vendor);
}

}  // namespace tiletune::kernels::attention
