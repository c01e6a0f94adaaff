#include "server/planned_kernels.h"

#include <set>
#include <string>

#include "kernels/fusion/fusion_planner.h"

namespace tiletune::server {

std::vector<v1::KernelKey> PlannedJobKernels(const v1::JobSpec& spec,
                                             const kernels::KeyLimits& limits) {
  std::vector<v1::KernelKey> keys;
  std::set<std::string> seen;
  const auto add = [&](const v1::KernelKey& key) {
    v1::KernelKey normalized = kernels::NormalizeKernelKey(key);
    if (seen.insert(kernels::CanonicalKeyString(normalized)).second) {
      keys.push_back(std::move(normalized));
    }
  };
  for (const auto& key : spec.kernels()) {
    if (!kernels::IsGraphKey(key)) {
      add(key);
      continue;
    }
    const v1::FusionPlan plan = kernels::fusion::PlanFusion(key, limits);
    for (const auto& kernel : plan.kernels()) add(kernel.key());
  }
  return keys;
}

}  // namespace tiletune::server
