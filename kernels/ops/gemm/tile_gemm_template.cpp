// tile_gemm: the tensor-core GEMM of the tile library (mma.sync on NVIDIA,
// MFMA on AMD) with the key's epilogue chain fused into its store. f32 keys
// that allow tf32 run the same kernel on float tiles (mma.sync .tf32,
// tt/arch/sm80_tf32_mma_sync.h) on NVIDIA: one template, one space, one baseline
// (cuBLASLt's FAST_TF32) for every tensor-core GEMM key.
#include "kernels/ops/gemm/cublaslt_baseline.h"
#include "kernels/ops/gemm/gemm_templates.h"
#include "kernels/ops/gemm/tile_gemm_source.h"
#include "kernels/ops/gemm/tma_and_decode_gemm_source.h"
#include "kernels/ops/gemm/tma_and_decode_gemm_space.h"
#include "kernels/source/host_source.h"

namespace tiletune::kernels::gemm {
namespace {

class TileGemm final : public KernelTemplate {
 public:
  explicit TileGemm(const GemmTarget& target) : target_(target) {}

  std::string_view name() const override { return kTileGemmName; }
  std::string_view backend() const override { return target_.vendor.backend; }

  // MFMA reads xf32 on gfx940+ only; the gfx90a leaf has no float operands,
  // so f32 keys on HIP stay with gpu_gemm_tiled even when they allow tf32.
  std::optional<std::string> Unsupported(const v1::KernelKey& key) const override {
    if (target_.vendor.backend != gpu::kCuda.backend && key.input_dtype() == v1::DTYPE_F32) {
      return std::string(kTileGemmName) + " has no tf32 tensor cores on " +
             std::string(target_.vendor.backend) + " (gfx90a MFMA has no xf32)";
    }
    return UnsupportedTileGemm(key);
  }

  SearchSpace Space(const v1::KernelKey& key, const DeviceDescription& device) const override {
    return TileGemmSpace(ProblemOf(key), GemmTargetOn(target_, device));
  }

  // Prefill with two of tma_ws_gemm's smallest tiles an SM: where that
  // family serves the key it won every such key on the H100 and the H200
  // (bench/results/2026-12-07-h100-chain-spill-prune.md), so the ~40
  // variants here would only cost tuning time.
  std::string_view LeavesSearchTo(const v1::KernelKey& key,
                                  const DeviceDescription& device) const override {
    const GemmProblem p = ProblemOf(key);
    const auto tiles = [](int64_t extent) { return (extent + kTmaWsMinTile - 1) / kTmaWsMinTile; };
    if (tiles(p.m) * tiles(p.n) * p.batch < 2 * device.compute_units) return {};
    return kTmaWsGemmName;
  }

  KernelSource Source(const v1::KernelKey& key, const Variant& variant) const override {
    return TileGemmSource(key, target_, variant, PlantedFault(variant));
  }

  // cuBLASLt on NVIDIA. The AMD slot (hipBLASLt or rocBLAS) holds our naive
  // GEMM: neither library is packaged for Debian 12 (README, "Backends").
  Baseline BaselineFor(const v1::KernelKey& key, const DeviceDescription&) const override {
    if (target_.vendor.backend == gpu::kCuda.backend) return CublasLtBaseline(key);
    Baseline baseline{std::string(kNaiveGemmName), NaiveGemmSource(key, target_)};
    baseline.vendor_gap = std::string(kNoAmdBlas);
    return baseline;
  }

 private:
  const GemmTarget target_;
};

}  // namespace

std::unique_ptr<KernelTemplate> MakeTileGemm(const GemmTarget& target) {
  return std::make_unique<TileGemm>(target);
}

}  // namespace tiletune::kernels::gemm
