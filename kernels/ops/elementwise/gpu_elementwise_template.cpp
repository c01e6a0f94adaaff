// The GPU element-wise template: the kernel the fusion planner emits for a
// chain of element-wise ops alone. Tuned over block size, vector width and
// vectors in flight per thread.
#include <algorithm>

#include "kernels/core/kernel_key.h"
#include "kernels/ops/elementwise/elementwise_op.h"
#include "kernels/ops/elementwise/elementwise_templates.h"

namespace tiletune::kernels::elementwise {
namespace {

using gpu::GpuKernelSpec;
using gpu::GpuVendor;

// Threads of the baseline's blocks, as for the row kernels' baselines.
constexpr int64_t kNaiveThreads = 256;

int64_t CeilDiv(int64_t a, int64_t b) {
  return (a + b - 1) / b;
}

class GpuElementwise final : public KernelTemplate {
 public:
  explicit GpuElementwise(const GpuVendor& vendor) : vendor_(vendor) {}

  std::string_view name() const override { return "gpu_elementwise"; }
  std::string_view backend() const override { return vendor_.backend; }

  std::optional<std::string> Unsupported(const v1::KernelKey& key) const override {
    if (key.op() != kOpName) return "gpu_elementwise serves elementwise, not " + key.op();
    return gpu::UnsupportedGpuTypes(key);
  }

  SearchSpace Space(const v1::KernelKey& key, const DeviceDescription&) const override {
    const int64_t total = Total(key);
    SearchSpace space;
    space.Add("threads", {128, 256, 512})
        .Add("vec", gpu::VectorWidths(key))
        .Add("unroll", {1, 2, 4});
    space.Require("one block's first step fits in the tensor (or the smallest block, 128x1x1)",
                  [total](const Variant& v) {
                    const int64_t per_block = v.at("threads") * v.at("vec") * v.at("unroll");
                    return per_block <= std::max<int64_t>(total, 128);
                  });
    return space;
  }

  KernelSource Source(const v1::KernelKey& key, const Variant& variant) const override {
    GpuKernelSpec spec = Spec(key, "tt::elementwise_rows", "gpu_elementwise");
    spec.entry = gpu::GpuEntry("gpu_elementwise", variant);
    for (const char* p : {"threads", "vec", "unroll"}) {
      spec.config.emplace_back(p, RequiredParam(variant, "gpu_elementwise", p));
    }
    spec.block = {variant.at("threads"), 1, 1};
    spec.grid = {CeilDiv(Total(key), spec.block[0] * variant.at("vec") * variant.at("unroll")), 1,
                 1};
    return gpu::GenerateGpuSource(key, vendor_, spec, PlantedFault(variant));
  }

  Baseline BaselineFor(const v1::KernelKey& key, const DeviceDescription&) const override {
    const std::string name = std::string(vendor_.backend) + "-naive";
    GpuKernelSpec spec = Spec(key, "tt::elementwise_naive", name);
    spec.entry = gpu::GpuEntry(name + "-elementwise", {});
    spec.config = {{"threads", kNaiveThreads}};
    spec.block = {kNaiveThreads, 1, 1};
    spec.grid = {CeilDiv(Total(key), kNaiveThreads), 1, 1};
    return {name, gpu::GenerateGpuSource(key, vendor_, spec)};
  }

 private:
  static int64_t Total(const v1::KernelKey& key) {
    return DimSize(key, "rows").value_or(1) * DimSize(key, "cols").value_or(1);
  }

  static GpuKernelSpec Spec(const v1::KernelKey& key, std::string function,
                            std::string kernel_name) {
    GpuKernelSpec spec;
    spec.types = gpu::InputOutputTypes(key);
    spec.kernel_name = std::move(kernel_name);
    spec.header = "ops/elementwise/device/elementwise.h";
    spec.function = std::move(function);
    spec.takes_prologue = true;
    return spec;
  }

  GpuVendor vendor_;
};

}  // namespace

std::unique_ptr<KernelTemplate> MakeGpuElementwise(const gpu::GpuVendor& vendor) {
  return std::make_unique<GpuElementwise>(vendor);
}

}  // namespace tiletune::kernels::elementwise
