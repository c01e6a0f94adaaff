// The host GEMM families, both with the epilogue chain fused into the final
// store, and their baseline (OpenBLAS where it links). host_gemm_blocked:
// cache-blocked, packed, with a register-blocked micro-kernel.
// host_gemm_rowwise: rows streamed without packing, which costs less than
// packing on small problems and decode (m = 1), where it beats OpenBLAS.
#include "kernels/core/kernel_key.h"
#include "kernels/ops/gemm/gemm_op.h"
#include "kernels/ops/gemm/gemm_templates.h"
#include "kernels/source/host_source.h"

namespace tiletune::kernels::gemm {
namespace {

using host::GenerateHostSource;
using host::HostKernelSpec;
using host::HostThreadCounts;
using host::kHostBaselineName;
using host::kLinkOpenBlasOption;
using host::UnsupportedHostTypes;

constexpr std::string_view kName = "host_gemm_blocked";
constexpr std::string_view kRowwiseName = "host_gemm_rowwise";
constexpr std::string_view kOpenBlasBaselineName = "openblas_sgemm";

// The smallest value of each tile parameter; a tile may exceed the problem
// only up to the problem rounded up to it.
constexpr int64_t kMinTileM = 32, kMinTileN = 64, kMinTileK = 64;

int64_t RoundUp(int64_t value, int64_t multiple) {
  return (value + multiple - 1) / multiple * multiple;
}

HostKernelSpec Spec(const v1::KernelKey& key, std::string function, std::string kernel_name) {
  const v1::KernelKey k = NormalizeKernelKey(key);
  HostKernelSpec spec;
  spec.kernel_name = std::move(kernel_name);
  spec.header = "ops/gemm/cpu/gemm_blocked.h";
  spec.function = std::move(function);
  spec.config = {{"a_col_major", IsColMajor(k, "a") ? 1 : 0},
                 {"b_col_major", IsColMajor(k, "b") ? 1 : 0},
                 {"gated", Gated(k) ? 1 : 0}};
  spec.output_elements = "args->batch * args->m * args->n";
  return spec;
}

// Whichever family serves the key: OpenBLAS's sgemm and the chain as one
// pass, on as many threads as a tuned kernel may use, where OpenBLAS links;
// otherwise our straightforward kernel.
Baseline HostGemmBaseline(const v1::KernelKey& key, const DeviceDescription& device) {
  if (!device.has_openblas) {
    return {kHostBaselineName,
            GenerateHostSource(key, Spec(key, "tt::gemm_naive", kHostBaselineName))};
  }
  HostKernelSpec spec = Spec(key, "tt::gemm_openblas", std::string(kOpenBlasBaselineName));
  spec.header = "ops/gemm/cpu/gemm_openblas.h";
  spec.threads = static_cast<int>(HostThreadCounts(device).back());
  spec.config.emplace_back("threads", spec.threads);
  KernelSource source = GenerateHostSource(key, spec);
  source.compile_options.emplace_back(kLinkOpenBlasOption);
  return {std::string(kOpenBlasBaselineName), std::move(source)};
}

class HostGemmBlocked final : public KernelTemplate {
 public:
  std::string_view name() const override { return kName; }
  std::string_view backend() const override { return "host"; }

  std::optional<std::string> Unsupported(const v1::KernelKey& key) const override {
    if (key.op() != kOpName) return std::string(kName) + " serves gemm, not " + key.op();
    if (auto why = UnsupportedGate(key, kName)) return why;
    return UnsupportedHostTypes(key);
  }

  SearchSpace Space(const v1::KernelKey& key, const DeviceDescription& device) const override {
    const int64_t m = DimSize(key, "m").value_or(1), n = DimSize(key, "n").value_or(1),
                  k = DimSize(key, "k").value_or(1), batch = DimSize(key, "batch").value_or(1);
    SearchSpace space;
    space.Add("tile_m", {32, 64, 96, 128})
        .Add("tile_n", {64, 128, 256})
        .Add("tile_k", {64, 256})
        .Add("micro_m", {4, 6, 8})
        .Add("micro_n", {16, 32})
        .Add("k_unroll", {1, 4})
        .Add("threads", HostThreadCounts(device));
    space.Require("micro_m divides tile_m",
                  [](const Variant& v) { return v.at("tile_m") % v.at("micro_m") == 0; });
    space.Require("tile_m <= m rounded up to 32",
                  [m](const Variant& v) { return v.at("tile_m") <= RoundUp(m, kMinTileM); });
    space.Require("tile_n <= n rounded up to 64",
                  [n](const Variant& v) { return v.at("tile_n") <= RoundUp(n, kMinTileN); });
    space.Require("tile_k <= k rounded up to 64",
                  [k](const Variant& v) { return v.at("tile_k") <= RoundUp(k, kMinTileK); });
    space.Require("a second thread needs at least two row blocks", [m, batch](const Variant& v) {
      return v.at("threads") == 1 || batch * ((m + v.at("tile_m") - 1) / v.at("tile_m")) >= 2;
    });
    return space;
  }

  KernelSource Source(const v1::KernelKey& key, const Variant& variant) const override {
    HostKernelSpec spec = Spec(key, "tt::gemm_blocked", std::string(kName));
    for (const char* p : {"tile_m", "tile_n", "tile_k", "micro_m", "micro_n", "k_unroll"}) {
      spec.config.emplace_back(p, RequiredParam(variant, kName, p));
    }
    spec.threads = static_cast<int>(RequiredParam(variant, kName, "threads"));
    spec.config.emplace_back("threads", spec.threads);
    return GenerateHostSource(key, spec, PlantedFault(variant));
  }

  Baseline BaselineFor(const v1::KernelKey& key, const DeviceDescription& device) const override {
    return HostGemmBaseline(key, device);
  }
};

class HostGemmRowwise final : public KernelTemplate {
 public:
  std::string_view name() const override { return kRowwiseName; }
  std::string_view backend() const override { return "host"; }

  std::optional<std::string> Unsupported(const v1::KernelKey& key) const override {
    if (key.op() != kOpName) return std::string(kRowwiseName) + " serves gemm, not " + key.op();
    return UnsupportedHostTypes(key);
  }

  SearchSpace Space(const v1::KernelKey& key, const DeviceDescription& device) const override {
    const int64_t rows = DimSize(key, "m").value_or(1) * DimSize(key, "batch").value_or(1);
    SearchSpace space;
    space.Add("threads", HostThreadCounts(device));
    space.Require("a second thread needs at least two rows",
                  [rows](const Variant& v) { return v.at("threads") == 1 || rows >= 2; });
    return space;
  }

  KernelSource Source(const v1::KernelKey& key, const Variant& variant) const override {
    HostKernelSpec spec = Spec(key, "tt::gemm_rowwise", std::string(kRowwiseName));
    spec.threads = static_cast<int>(RequiredParam(variant, kRowwiseName, "threads"));
    spec.config.emplace_back("threads", spec.threads);
    return GenerateHostSource(key, spec, PlantedFault(variant));
  }

  Baseline BaselineFor(const v1::KernelKey& key, const DeviceDescription& device) const override {
    return HostGemmBaseline(key, device);
  }
};

}  // namespace

std::unique_ptr<KernelTemplate> MakeHostGemmBlocked() {
  return std::make_unique<HostGemmBlocked>();
}

std::unique_ptr<KernelTemplate> MakeHostGemmRowwise() {
  return std::make_unique<HostGemmRowwise>();
}

}  // namespace tiletune::kernels::gemm
