// The GPU element-wise template: the kernel the fusion planner emits for a
// chain of element-wise ops alone. Tuned over block size, vector width and
// vectors in flight per thread.
#include <algorithm>

#include "gpu_templates.h"
#include "kernels/host/host_source.h"
#include "kernels/kernel_key.h"

namespace tiletune::kernels::gpu {
namespace {

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
    if (key.op() != "elementwise") return "gpu_elementwise serves elementwise, not " + key.op();
    return UnsupportedGpuTypes(key);
  }

  SearchSpace Space(const v1::KernelKey& key) const override {
    const int64_t total = Total(key);
    SearchSpace space;
    space.Add("threads", {128, 256, 512}).Add("vec", VectorWidths(key)).Add("unroll", {1, 2, 4});
    space.Require("one block's first step fits in the tensor (or the smallest block, 128x1x1)",
                  [total](const Variant& v) {
                    const int64_t per_block = v.at("threads") * v.at("vec") * v.at("unroll");
                    return per_block <= std::max<int64_t>(total, 128);
                  });
    return space;
  }

  KernelSource Source(const v1::KernelKey& key, const Variant& variant) const override {
    GpuKernelSpec spec = Spec("tt::elementwise_rows", "gpu_elementwise");
    spec.entry = GpuEntry("gpu_elementwise", variant);
    for (const char* p : {"threads", "vec", "unroll"}) {
      spec.config.emplace_back(p, host::RequiredParam(variant, "gpu_elementwise", p));
    }
    spec.threads = variant.at("threads");
    spec.blocks = CeilDiv(Total(key), spec.threads * variant.at("vec") * variant.at("unroll"));
    return GenerateGpuSource(key, vendor_, spec, host::PlantedFault(variant));
  }

  Baseline BaselineFor(const v1::KernelKey& key) const override {
    const std::string name = std::string(vendor_.backend) + "-naive";
    GpuKernelSpec spec = Spec("tt::elementwise_naive", name);
    spec.entry = GpuEntry(name + "-elementwise", {});
    spec.config = {{"threads", kNaiveThreads}};
    spec.threads = kNaiveThreads;
    spec.blocks = CeilDiv(Total(key), kNaiveThreads);
    return {name, GenerateGpuSource(key, vendor_, spec)};
  }

 private:
  static int64_t Total(const v1::KernelKey& key) {
    return DimSize(key, "rows").value_or(1) * DimSize(key, "cols").value_or(1);
  }

  static GpuKernelSpec Spec(std::string function, std::string kernel_name) {
    GpuKernelSpec spec;
    spec.kernel_name = std::move(kernel_name);
    spec.header = "elementwise.h";
    spec.function = std::move(function);
    spec.takes_prologue = true;
    return spec;
  }

  GpuVendor vendor_;
};

}  // namespace

std::unique_ptr<KernelTemplate> MakeGpuElementwise(const GpuVendor& vendor) {
  return std::make_unique<GpuElementwise>(vendor);
}

}  // namespace tiletune::kernels::gpu
