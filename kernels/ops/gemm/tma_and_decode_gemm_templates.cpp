// The NVIDIA GEMM families beside tile_gemm (tma_and_decode_gemm_space.h):
// tma_ws_gemm for prefill, tma_decode_gemm and mma_decode_gemm for decode.
// They serve what tile_gemm serves on CUDA and compete with it inside the
// key's space; each space is empty where its family does not fit the key
// or the device. The baseline is tile_gemm's: cuBLASLt.
#include "kernels/ops/gemm/cublaslt_baseline.h"
#include "kernels/ops/gemm/gemm_templates.h"
#include "kernels/ops/gemm/tile_gemm_source.h"
#include "kernels/ops/gemm/tma_and_decode_gemm_source.h"

namespace tiletune::kernels::gemm {
namespace {

using SpaceOf = SearchSpace (*)(const GemmProblem&, const GemmTarget&);
using SourceOf = KernelSource (*)(const v1::KernelKey&, const GemmTarget&, const Variant&, int64_t);
using UnsupportedOf = std::optional<std::string> (*)(const GemmProblem&);

class CudaGemmFamily final : public KernelTemplate {
 public:
  CudaGemmFamily(std::string_view name, UnsupportedOf unsupported, SpaceOf space, SourceOf source)
      : name_(name), unsupported_(unsupported), space_(space), source_(source) {}

  std::string_view name() const override { return name_; }
  std::string_view backend() const override { return gpu::kCuda.backend; }

  // What the tile GEMM reads (bf16, f16, f32 as tf32), then the family's own limits.
  std::optional<std::string> Unsupported(const v1::KernelKey& key) const override {
    if (auto why = UnsupportedTileGemm(key)) return why;
    if (auto why = unsupported_(ProblemOf(key))) return std::string(name_) + ": " + *why;
    return std::nullopt;
  }

  SearchSpace Space(const v1::KernelKey& key, const DeviceDescription& device) const override {
    return space_(ProblemOf(key), GemmTargetOn(kSm90Target, device));
  }

  KernelSource Source(const v1::KernelKey& key, const Variant& variant) const override {
    return source_(key, kSm90Target, variant, PlantedFault(variant));
  }

  Baseline BaselineFor(const v1::KernelKey& key, const DeviceDescription&) const override {
    return CublasLtBaseline(key);
  }

 private:
  const std::string_view name_;
  const UnsupportedOf unsupported_;
  const SpaceOf space_;
  const SourceOf source_;
};

}  // namespace

std::unique_ptr<KernelTemplate> MakeTmaWsGemm() {
  return std::make_unique<CudaGemmFamily>(kTmaWsGemmName, UnsupportedTmaWsGemm, TmaWsGemmSpace,
                                          TmaWsGemmSource);
}
std::unique_ptr<KernelTemplate> MakeTmaDecodeGemm() {
  return std::make_unique<CudaGemmFamily>(kTmaDecodeGemmName, UnsupportedTmaDecodeGemm,
                                          TmaDecodeGemmSpace, TmaDecodeGemmSource);
}
std::unique_ptr<KernelTemplate> MakeMmaDecodeGemm() {
  return std::make_unique<CudaGemmFamily>(kMmaDecodeGemmName, UnsupportedMmaDecodeGemm,
                                          MmaDecodeGemmSpace, MmaDecodeGemmSource);
}

}  // namespace tiletune::kernels::gemm
