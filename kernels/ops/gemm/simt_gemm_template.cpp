// gpu_gemm_tiled: shared-memory tiled GEMM on the SIMT cores with register
// blocking, a gate and the epilogue chain fused into the store (the kernel
// is ops/gemm/device/gemm_simt.h). Tensor cores (tf32, bf16) are
// tile_gemm_template.cpp's.
#include <algorithm>

#include "kernels/core/kernel_key.h"
#include "kernels/ops/gemm/cublaslt_baseline.h"
#include "kernels/ops/gemm/gemm_op.h"
#include "kernels/ops/gemm/gemm_templates.h"

namespace tiletune::kernels::gemm {
namespace {

using gpu::GpuKernelSpec;
using gpu::GpuVendor;

constexpr std::string_view kName = "gpu_gemm_tiled";
// The smallest value of each tile parameter; a tile may exceed the problem
// only up to the problem rounded up to it.
constexpr int64_t kMinTileM = 32, kMinTileN = 32, kMinTileK = 8;
// Static shared memory a block may declare.
constexpr int64_t kMaxStaticSharedBytes = 48 * 1024;
// Floats of padding after each shared tile row (gemm_simt.h: kStrideA, kStrideB).
constexpr int64_t kSharedRowPadding = 4;
constexpr int64_t kNaiveThreads = 256;
constexpr int64_t kMaxDim = int64_t{1} << 24;

int64_t CeilDiv(int64_t a, int64_t b) {
  return (a + b - 1) / b;
}

int64_t RoundUp(int64_t value, int64_t multiple) {
  return CeilDiv(value, multiple) * multiple;
}

int64_t Threads(const Variant& v) {
  return (v.at("tile_m") / v.at("micro_m")) * (v.at("tile_n") / v.at("micro_n"));
}

// Bytes of the A and B tiles (and B_up's with a gate) in shared memory,
// both buffers when double buffered.
int64_t SharedBytes(const Variant& v, bool gated) {
  const int64_t stages = v.at("double_buffer") != 0 ? 2 : 1;
  const int64_t b_tiles = gated ? 2 : 1;
  return stages * v.at("tile_k") *
         (v.at("tile_m") + kSharedRowPadding + b_tiles * (v.at("tile_n") + kSharedRowPadding)) *
         int64_t{sizeof(float)};
}

class GpuGemmTiled final : public KernelTemplate {
 public:
  explicit GpuGemmTiled(const GpuVendor& vendor) : vendor_(vendor) {}

  std::string_view name() const override { return kName; }
  std::string_view backend() const override { return vendor_.backend; }

  std::optional<std::string> Unsupported(const v1::KernelKey& key) const override {
    if (key.op() != kOpName) return std::string(kName) + " serves gemm, not " + key.op();
    if (auto why = gpu::UnsupportedGpuTypes(key)) return why;
    // gemm.h computes on f32 tiles; tile_gemm serves bf16 and f16.
    const v1::KernelKey k = NormalizeKernelKey(key);
    if (k.input_dtype() != v1::DTYPE_F32 || k.output_dtype() != v1::DTYPE_F32) {
      return std::string(kName) + " reads and writes f32, not " +
             std::string(DTypeName(k.input_dtype())) + " -> " +
             std::string(DTypeName(k.output_dtype())) + " (tile_gemm serves bf16 and f16)";
    }
    return std::nullopt;
  }

  SearchSpace Space(const v1::KernelKey& key, const DeviceDescription& device) const override {
    const int64_t m = DimSize(key, "m").value_or(1), n = DimSize(key, "n").value_or(1),
                  k = DimSize(key, "k").value_or(1);
    const int64_t warp = device.warp_size;
    const bool gated = Gated(key);
    SearchSpace space;
    space.Add("tile_m", {32, 64, 128})
        .Add("tile_n", {32, 64, 128})
        .Add("tile_k", {8, 16})
        .Add("micro_m", {4, 8})
        .Add("micro_n", {4, 8})
        .Add("double_buffer", {0, 1});
    space.Require("threads ((tile_m/micro_m)*(tile_n/micro_n)) are a multiple of " +
                      std::to_string(warp) + ", at most 1024",
                  [warp](const Variant& v) {
                    const int64_t threads = Threads(v);
                    return threads % warp == 0 && threads <= 1024;
                  });
    // For a tile and a thread count, a square thread tile reads the fewest
    // shared-memory values per multiply-add.
    space.Require("square thread tile (micro_m = micro_n)",
                  [](const Variant& v) { return v.at("micro_m") == v.at("micro_n"); });
    space.Require("tile_m and tile_n within a factor of 2", [](const Variant& v) {
      return v.at("tile_m") <= 2 * v.at("tile_n") && v.at("tile_n") <= 2 * v.at("tile_m");
    });
    // A 4x4 thread tile is bound by its shared-memory reads: it serves the
    // problems too small for large tiles; 8x8 keeps large tiles at <= 256
    // threads.
    space.Require("4x4 thread tiles on tiles up to 64x64, 8x8 on tiles with a side of 128",
                  [](const Variant& v) {
                    const bool large = v.at("tile_m") == 128 || v.at("tile_n") == 128;
                    return v.at("micro_m") == (large ? 8 : 4);
                  });
    space.Require("threads divide the tile loads (tile_m*tile_k and tile_n*tile_k)",
                  [](const Variant& v) {
                    const int64_t threads = Threads(v);
                    return v.at("tile_m") * v.at("tile_k") % threads == 0 &&
                           v.at("tile_n") * v.at("tile_k") % threads == 0;
                  });
    space.Require("a gate's two accumulator sets in 4x4 thread tiles (tiles up to 64x64)",
                  [gated](const Variant& v) { return !gated || v.at("micro_m") == 4; });
    space.Require("shared memory <= 48 KiB (static)", [gated](const Variant& v) {
      return SharedBytes(v, gated) <= kMaxStaticSharedBytes;
    });
    // gemm_simt.h addresses an element as a 32-bit offset inside its tile.
    space.Require("m, n and k below 2^24 (32-bit offsets inside a tile)",
                  [m, n, k](const Variant&) {
                    return std::max({m, n, k}) < kMaxDim;
                  });
    space.Require("tile_m <= m rounded up to 32",
                  [m](const Variant& v) { return v.at("tile_m") <= RoundUp(m, kMinTileM); });
    space.Require("tile_n <= n rounded up to 32",
                  [n](const Variant& v) { return v.at("tile_n") <= RoundUp(n, kMinTileN); });
    space.Require("tile_k <= k rounded up to 8",
                  [k](const Variant& v) { return v.at("tile_k") <= RoundUp(k, kMinTileK); });
    return space;
  }

  KernelSource Source(const v1::KernelKey& key, const Variant& variant) const override {
    GpuKernelSpec spec = Spec(key, "tt::gemm_tiled", std::string(kName));
    spec.entry = gpu::GpuEntry(kName, variant);
    for (const char* p : {"tile_m", "tile_n", "tile_k", "micro_m", "micro_n", "double_buffer"}) {
      spec.config.emplace_back(p, RequiredParam(variant, kName, p));
    }
    spec.block = {Threads(variant), 1, 1};
    spec.grid = {Batch(key) * CeilDiv(DimSize(key, "m").value_or(1), variant.at("tile_m")) *
                     CeilDiv(DimSize(key, "n").value_or(1), variant.at("tile_n")),
                 1, 1};
    return gpu::GenerateGpuSource(key, vendor_, spec, PlantedFault(variant));
  }

  // cuBLASLt on NVIDIA; on AMD a naive kernel holds the slot of hipBLASLt
  // and rocBLAS, which Debian 12 does not package (README, "Backends").
  Baseline BaselineFor(const v1::KernelKey& key, const DeviceDescription&) const override {
    if (vendor_.backend == gpu::kCuda.backend) return CublasLtBaseline(key);
    const std::string name = std::string(vendor_.backend) + "-naive-gemm";
    GpuKernelSpec spec = Spec(key, "tt::gemm_naive", name);
    spec.entry = gpu::GpuEntry(name, {});
    spec.config.emplace_back("threads", kNaiveThreads);
    spec.block = {kNaiveThreads, 1, 1};
    spec.grid = {CeilDiv(Batch(key) * DimSize(key, "m").value_or(1) * DimSize(key, "n").value_or(1),
                         kNaiveThreads),
                 1, 1};
    Baseline baseline{name, gpu::GenerateGpuSource(key, vendor_, spec)};
    baseline.vendor_gap = std::string(kNoAmdBlas);
    return baseline;
  }

 private:
  static int64_t Batch(const v1::KernelKey& key) { return DimSize(key, "batch").value_or(1); }

  static GpuKernelSpec Spec(const v1::KernelKey& key, std::string function,
                            std::string kernel_name) {
    const v1::KernelKey k = NormalizeKernelKey(key);
    GpuKernelSpec spec;
    spec.kernel_name = std::move(kernel_name);
    spec.types = gpu::InputOutputTypes(key);
    spec.header = "ops/gemm/device/gemm_simt.h";
    spec.function = std::move(function);
    spec.config = {{"a_col_major", IsColMajor(k, "a") ? 1 : 0},
                   {"b_col_major", IsColMajor(k, "b") ? 1 : 0},
                   {"gated", Gated(k) ? 1 : 0}};
    return spec;
  }

  GpuVendor vendor_;
};

}  // namespace

std::unique_ptr<KernelTemplate> MakeSimtGemm(const gpu::GpuVendor& vendor) {
  return std::make_unique<GpuGemmTiled>(vendor);
}

}  // namespace tiletune::kernels::gemm
