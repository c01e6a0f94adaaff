#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "kernels/core/device_description.h"
#include "kernels/core/kernel_template.h"
#include "kernels/core/search_space.h"

namespace tiletune::kernels {

// The variant parameter naming which template of a KeySpace a variant
// belongs to (its index there). Only the tuner's strategies see it: sources,
// trials, records and known failures hold the template's own parameters and
// the template's name.
inline constexpr std::string_view kTemplateParameter = "template";

// One serving template and its space for the key.
struct TemplateSpace {
  const KernelTemplate* kernel;
  SearchSpace space;
  // False where another serving template searches the key instead
  // (KernelTemplate::LeavesSearchTo).
  bool searched = true;
};

// The search space of a key on a backend: the union over every template of
// that backend that serves the key (catalog order), each pruned by its own
// constraints.
class KeySpace {
 public:
  // Every template of the device's backend serving the key, with its space
  // on that device. Empty, with `why` saying why, when none serves it.
  static KeySpace Of(const v1::KernelKey& key, const DeviceDescription& device, std::string* why);
  explicit KeySpace(std::vector<TemplateSpace> templates);

  bool empty() const { return templates_.empty(); }
  const std::vector<TemplateSpace>& templates() const { return templates_; }
  // The first serving template: its BaselineFor is the key's baseline (the
  // op's: cuBLASLt, or the naive kernel, whichever GEMM family serves).
  const KernelTemplate& first() const { return *templates_.front().kernel; }

  // Every valid variant of every searched template, template by template,
  // each with kTemplateParameter set to its template's index.
  std::vector<Variant> ValidVariants() const;
  // Those of `valid` (ValidVariants()) that their template's space prefers
  // (SearchSpace::Prefer), by rule, then template, then index.
  std::vector<Variant> PreferredVariants(const std::vector<Variant>& valid) const;
  // The template a variant of ValidVariants belongs to (index 0 without
  // kTemplateParameter).
  const KernelTemplate& TemplateOf(const Variant& variant) const;
  // The index of the template with this name, or nullopt.
  std::optional<int64_t> IndexOf(std::string_view kernel_name) const;
  // The space of one variant (its template's own parameters) of the
  // template named `kernel_name`: what a verify job times. Empty, with `why`
  // saying why, when no such template serves the key here or the variant
  // is not a point of its space.
  KeySpace Only(std::string_view kernel_name, const Variant& variant, std::string* why) const;

 private:
  std::vector<TemplateSpace> templates_;
};

// The variant as its template sees it: without kTemplateParameter.
Variant OwnParameters(Variant variant);

// The index of the template a variant of ValidVariants belongs to: its
// kTemplateParameter, 0 without one.
int64_t TemplateIndexOf(const Variant& variant);

}  // namespace tiletune::kernels
