// Which kernel templates this binary holds, and which serve a key.
#include <algorithm>

#include "kernels/core/kernel_template.h"
#include "kernels/ops/attention/attention_op.h"
#include "kernels/ops/attention/attention_templates.h"
#include "kernels/ops/elementwise/elementwise_op.h"
#include "kernels/ops/elementwise/elementwise_templates.h"
#include "kernels/ops/gemm/gemm_op.h"
#include "kernels/ops/gemm/gemm_templates.h"
#include "kernels/ops/layernorm/layernorm_op.h"
#include "kernels/ops/layernorm/layernorm_templates.h"
#include "kernels/ops/rmsnorm/rmsnorm_op.h"
#include "kernels/ops/rmsnorm/rmsnorm_templates.h"
#include "kernels/ops/softmax/softmax_op.h"
#include "kernels/ops/softmax/softmax_templates.h"

namespace tiletune::kernels {
namespace {

// A template and the op it serves (the catalog's own index: templates only
// answer per key whether they serve it).
struct CatalogEntry {
  std::string_view op;
  const KernelTemplate* kernel;
};

struct Catalog {
  std::vector<std::unique_ptr<KernelTemplate>> templates;
  std::vector<CatalogEntry> entries;

  void Add(std::string_view op, std::unique_ptr<KernelTemplate> t) {
    entries.push_back({op, t.get()});
    templates.push_back(std::move(t));
  }
};

const Catalog& TheCatalog() {
  static const Catalog catalog = [] {
    Catalog c;
    c.Add(gemm::kOpName, gemm::MakeHostGemmBlocked());
    c.Add(gemm::kOpName, gemm::MakeHostGemmRowwise());
    c.Add(softmax::kOpName, softmax::MakeHostRows());
    c.Add(rmsnorm::kOpName, rmsnorm::MakeHostRows());
    c.Add(layernorm::kOpName, layernorm::MakeHostRows());
    c.Add(elementwise::kOpName, elementwise::MakeHostRows());
    c.Add(attention::kOpName, attention::MakeHostAttention());
    // A key's space is the union of every template that serves it; the
    // first names the baseline. The tensor-core GEMM serves 16-bit inputs
    // and f32 allowing tf32 on CUDA; gpu_gemm_tiled every f32 key.
    for (const gemm::GemmTarget& target : {gemm::kSm90Target, gemm::kGfx90aTarget}) {
      c.Add(gemm::kOpName, gemm::MakeTileGemm(target));
    }
    c.Add(gemm::kOpName, gemm::MakeTmaWsGemm());
    c.Add(gemm::kOpName, gemm::MakeTmaDecodeGemm());
    c.Add(gemm::kOpName, gemm::MakeMmaDecodeGemm());
    for (const gpu::GpuVendor& vendor : {gpu::kCuda, gpu::kHip}) {
      c.Add(gemm::kOpName, gemm::MakeSimtGemm(vendor));
      c.Add(softmax::kOpName, softmax::MakeGpuRows(vendor));
      c.Add(rmsnorm::kOpName, rmsnorm::MakeGpuRows(vendor));
      c.Add(layernorm::kOpName, layernorm::MakeGpuRows(vendor));
      c.Add(elementwise::kOpName, elementwise::MakeGpuElementwise(vendor));
      c.Add(attention::kOpName, attention::MakeGpuFlashAttention(vendor));
    }
    c.Add(attention::kOpName, attention::MakeTmaWsAttention());
    c.Add(attention::kOpName, attention::MakeDecodeAttention());
    return c;
  }();
  return catalog;
}

}  // namespace

const std::vector<std::unique_ptr<KernelTemplate>>& AllKernelTemplates() {
  return TheCatalog().templates;
}

std::vector<const KernelTemplate*> ServingKernelTemplates(const v1::KernelKey& key,
                                                          std::string_view backend,
                                                          std::string* why) {
  const Catalog& catalog = TheCatalog();
  const bool backend_known =
      std::any_of(catalog.entries.begin(), catalog.entries.end(),
                  [&](const CatalogEntry& e) { return e.kernel->backend() == backend; });
  if (!backend_known) {
    if (why) *why = "no kernel templates for backend '" + std::string(backend) + "' in this build";
    return {};
  }
  std::vector<const KernelTemplate*> serving;
  std::string reasons;
  for (const auto& e : catalog.entries) {
    if (e.kernel->backend() != backend || e.op != key.op()) continue;
    const auto unsupported = e.kernel->Unsupported(key);
    if (!unsupported) {
      serving.push_back(e.kernel);
    } else {
      reasons +=
          (reasons.empty() ? "" : "; ") + std::string(e.kernel->name()) + ": " + *unsupported;
    }
  }
  if (serving.empty() && why) {
    *why = reasons.empty()
               ? "no " + std::string(backend) + " kernel template for op '" + key.op() + "'"
               : reasons;
  }
  return serving;
}

const KernelTemplate* FindKernelTemplate(const v1::KernelKey& key, std::string_view backend,
                                         std::string* why) {
  const auto serving = ServingKernelTemplates(key, backend, why);
  return serving.empty() ? nullptr : serving.front();
}

}  // namespace tiletune::kernels
