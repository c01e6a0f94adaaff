#include "kernels/core/key_space.h"

#include <algorithm>
#include <stdexcept>

namespace tiletune::kernels {

KeySpace KeySpace::Of(const v1::KernelKey& key, const DeviceDescription& device, std::string* why) {
  std::vector<TemplateSpace> templates;
  for (const KernelTemplate* t : ServingKernelTemplates(key, device.backend, why)) {
    templates.push_back({t, t->Space(key, device)});
  }
  for (TemplateSpace& ts : templates) {
    const std::string_view other = ts.kernel->LeavesSearchTo(key, device);
    if (other.empty()) continue;
    for (const TemplateSpace& o : templates) {
      if (o.kernel->name() == other && !o.space.ValidVariants().empty()) ts.searched = false;
    }
  }
  return KeySpace(std::move(templates));
}

KeySpace::KeySpace(std::vector<TemplateSpace> templates) : templates_(std::move(templates)) {}

std::vector<Variant> KeySpace::ValidVariants() const {
  std::vector<Variant> all;
  for (size_t i = 0; i < templates_.size(); ++i) {
    if (!templates_[i].searched) continue;
    for (Variant v : templates_[i].space.ValidVariants()) {
      v[std::string(kTemplateParameter)] = static_cast<int64_t>(i);
      all.push_back(std::move(v));
    }
  }
  return all;
}

std::vector<Variant> KeySpace::PreferredVariants(const std::vector<Variant>& valid) const {
  std::vector<std::pair<size_t, const Variant*>> ranked;
  for (const Variant& v : valid) {
    const int64_t index = TemplateIndexOf(v);
    if (index < 0 || index >= static_cast<int64_t>(templates_.size())) continue;
    if (auto rank = templates_[index].space.PreferenceOf(OwnParameters(v))) {
      ranked.emplace_back(*rank, &v);
    }
  }
  std::stable_sort(ranked.begin(), ranked.end(),
                   [](const auto& a, const auto& b) { return a.first < b.first; });
  std::vector<Variant> preferred;
  for (const auto& [rank, v] : ranked) preferred.push_back(*v);
  return preferred;
}

const KernelTemplate& KeySpace::TemplateOf(const Variant& variant) const {
  const int64_t index = TemplateIndexOf(variant);
  if (index < 0 || index >= static_cast<int64_t>(templates_.size())) {
    throw std::invalid_argument("variant names template " + std::to_string(index) + " of " +
                                std::to_string(templates_.size()));
  }
  return *templates_[index].kernel;
}

std::optional<int64_t> KeySpace::IndexOf(std::string_view kernel_name) const {
  for (size_t i = 0; i < templates_.size(); ++i) {
    if (templates_[i].kernel->name() == kernel_name) return static_cast<int64_t>(i);
  }
  return std::nullopt;
}

KeySpace KeySpace::Only(std::string_view kernel_name, const Variant& variant,
                        std::string* why) const {
  const auto index = IndexOf(kernel_name);
  if (!index) {
    *why = "template " + std::string(kernel_name) + " does not serve the key here";
    return KeySpace(std::vector<TemplateSpace>{});
  }
  const TemplateSpace& chosen = templates_[static_cast<size_t>(*index)];
  if (auto mismatch = chosen.space.Mismatch(variant)) {
    *why = "the parameters " + VariantString(variant) + " are not a variant of " +
           std::string(kernel_name) +
           " here: " + (mismatch->parameter.empty() ? "" : mismatch->parameter + " ") +
           mismatch->message;
    return KeySpace(std::vector<TemplateSpace>{});
  }
  return KeySpace({{chosen.kernel, chosen.space.Only(variant)}});
}

Variant OwnParameters(Variant variant) {
  variant.erase(std::string(kTemplateParameter));
  return variant;
}

int64_t TemplateIndexOf(const Variant& variant) {
  const auto it = variant.find(std::string(kTemplateParameter));
  return it == variant.end() ? 0 : it->second;
}

}  // namespace tiletune::kernels
