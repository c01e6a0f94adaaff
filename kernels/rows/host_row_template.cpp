// The row-wise host templates (softmax, rmsnorm, layernorm, elementwise):
// one shape of search space (reduction lanes, rows per task, threads) plus
// each op's own algorithm choices. All take the key's prologue.
#include "kernels/rows/host_row_template.h"
#include "kernels/core/kernel_key.h"

namespace tiletune::kernels::host {

RowKernelDefinition::RowKernelDefinition(std::string_view op_name, std::vector<Parameter> choices,
                                         bool reduce)
    : name("host_" + std::string(op_name) + "_rows"),
      op(op_name),
      header("ops/" + op + "/cpu/" + op + "_rows.h"),
      tuned("tt::" + op + "_rows"),
      naive("tt::" + op + "_naive"),
      algorithm(std::move(choices)),
      reduces(reduce) {}

namespace {

class HostRowKernel final : public KernelTemplate {
 public:
  explicit HostRowKernel(RowKernelDefinition definition) : def_(std::move(definition)) {}

  std::string_view name() const override { return def_.name; }
  std::string_view backend() const override { return "host"; }

  std::optional<std::string> Unsupported(const v1::KernelKey& key) const override {
    if (key.op() != def_.op) {
      return std::string(def_.name) + " serves " + std::string(def_.op) + ", not " + key.op();
    }
    return UnsupportedHostTypes(key);
  }

  SearchSpace Space(const v1::KernelKey& key, const DeviceDescription& device) const override {
    const int64_t rows = DimSize(key, "rows").value_or(1), cols = DimSize(key, "cols").value_or(1);
    SearchSpace space;
    if (def_.reduces) {
      space.Add("vec", {4, 8, 16});
      space.Require("vec <= cols (or the narrowest, 4)",
                    [cols](const Variant& v) { return v.at("vec") == 4 || v.at("vec") <= cols; });
    }
    for (const auto& p : def_.algorithm) space.Add(p.name, p.values);
    space.Add("rows_per_task", {1, 8, 32}).Add("threads", HostThreadCounts(device));
    space.Require("rows_per_task <= rows", [rows](const Variant& v) {
      return v.at("rows_per_task") == 1 || v.at("rows_per_task") <= rows;
    });
    space.Require("a second thread needs at least two tasks", [rows](const Variant& v) {
      const int64_t per_task = v.at("rows_per_task");
      return v.at("threads") == 1 || (rows + per_task - 1) / per_task >= 2;
    });
    return space;
  }

  KernelSource Source(const v1::KernelKey& key, const Variant& variant) const override {
    HostKernelSpec spec = Spec(key, def_.tuned, std::string(def_.name));
    if (def_.reduces) spec.config.emplace_back("vec", RequiredParam(variant, def_.name, "vec"));
    for (const auto& p : def_.algorithm) {
      spec.config.emplace_back(p.name, RequiredParam(variant, def_.name, p.name));
    }
    spec.config.emplace_back("rows_per_task", RequiredParam(variant, def_.name, "rows_per_task"));
    spec.threads = static_cast<int>(RequiredParam(variant, def_.name, "threads"));
    spec.config.emplace_back("threads", spec.threads);
    return GenerateHostSource(key, spec, PlantedFault(variant));
  }

  Baseline BaselineFor(const v1::KernelKey& key, const DeviceDescription&) const override {
    return {kHostBaselineName, GenerateHostSource(key, Spec(key, def_.naive, kHostBaselineName))};
  }

 private:
  // Every row kernel's Config says whether it writes its prologue's output.
  HostKernelSpec Spec(const v1::KernelKey& key, std::string function,
                      std::string kernel_name) const {
    HostKernelSpec spec;
    spec.kernel_name = std::move(kernel_name);
    spec.header = def_.header;
    spec.function = std::move(function);
    spec.output_elements = "args->rows * args->cols";
    spec.takes_prologue = true;
    spec.config.emplace_back("prologue_out", key.write_prologue_output() ? 1 : 0);
    return spec;
  }

  RowKernelDefinition def_;
};

}  // namespace

std::unique_ptr<KernelTemplate> MakeHostRowTemplate(RowKernelDefinition definition) {
  return std::make_unique<HostRowKernel>(std::move(definition));
}

}  // namespace tiletune::kernels::host
