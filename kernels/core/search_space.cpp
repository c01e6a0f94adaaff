#include "kernels/core/search_space.h"

#include <algorithm>
#include <stdexcept>

namespace tiletune::kernels {

SearchSpace& SearchSpace::Add(std::string name, std::vector<int64_t> values) {
  if (values.empty()) throw std::invalid_argument("parameter " + name + " has no values");
  parameters_.push_back({std::move(name), std::move(values)});
  return *this;
}

SearchSpace& SearchSpace::Require(std::string description,
                                  std::function<bool(const Variant&)> holds) {
  constraints_.push_back({std::move(description), std::move(holds)});
  return *this;
}

SearchSpace& SearchSpace::Prefer(std::string description,
                                 std::function<bool(const Variant&)> first) {
  preferences_.push_back({std::move(description), std::move(first)});
  return *this;
}

std::optional<size_t> SearchSpace::PreferenceOf(const Variant& variant) const {
  for (size_t i = 0; i < preferences_.size(); ++i) {
    if (preferences_[i].holds(variant)) return i;
  }
  return std::nullopt;
}

uint64_t SearchSpace::product_size() const {
  if (parameters_.empty()) return 0;
  uint64_t n = 1;
  for (const auto& p : parameters_) n *= p.values.size();
  return n;
}

Variant SearchSpace::At(uint64_t index) const {
  Variant v;
  for (auto it = parameters_.rbegin(); it != parameters_.rend(); ++it) {
    v[it->name] = it->values[index % it->values.size()];
    index /= it->values.size();
  }
  return v;
}

std::optional<std::string> SearchSpace::Violation(const Variant& variant) const {
  for (const auto& c : constraints_) {
    if (!c.holds(variant)) return c.description;
  }
  return std::nullopt;
}

std::optional<VariantMismatch> SearchSpace::Mismatch(const Variant& variant) const {
  for (const auto& p : parameters_) {
    const auto it = variant.find(p.name);
    if (it == variant.end()) return VariantMismatch{p.name, "is missing"};
    if (std::find(p.values.begin(), p.values.end(), it->second) == p.values.end()) {
      std::string values;
      for (int64_t v : p.values) values += (values.empty() ? "" : ", ") + std::to_string(v);
      return VariantMismatch{p.name,
                             "is " + std::to_string(it->second) + "; the space has " + values};
    }
  }
  for (const auto& entry : variant) {
    // Not a structured binding: clang 14 (the fuzz build) cannot capture one.
    const std::string& name = entry.first;
    const bool known = std::any_of(parameters_.begin(), parameters_.end(),
                                   [&](const Parameter& p) { return p.name == name; });
    if (!known) return VariantMismatch{name, "is not a parameter of this space"};
  }
  if (auto broken = Violation(variant)) return VariantMismatch{"", "breaks " + *broken};
  return std::nullopt;
}

SearchSpace SearchSpace::Only(const Variant& variant) const {
  SearchSpace only;
  for (const auto& p : parameters_) only.Add(p.name, {variant.at(p.name)});
  only.constraints_ = constraints_;
  return only;
}

std::vector<Variant> SearchSpace::ValidVariants() const {
  std::vector<Variant> out;
  const uint64_t n = product_size();
  for (uint64_t i = 0; i < n; ++i) {
    Variant v = At(i);
    if (!Violation(v)) out.push_back(std::move(v));
  }
  return out;
}

std::string VariantString(const Variant& variant) {
  std::string s;
  for (const auto& [name, value] : variant) {
    if (!s.empty()) s += ",";
    s += name + "=" + std::to_string(value);
  }
  return s;
}

int64_t RequiredParam(const Variant& variant, std::string_view kernel_name,
                      const std::string& name) {
  const auto it = variant.find(name);
  if (it == variant.end()) {
    throw std::invalid_argument(std::string(kernel_name) + ": variant has no parameter '" + name +
                                "' (" + VariantString(variant) + ")");
  }
  return it->second;
}

int64_t PlantedFault(const Variant& variant) {
  const auto it = variant.find(std::string(kPlantedFault));
  if (it == variant.end()) return 0;
  if (it->second < 1 || it->second > 3) {
    throw std::invalid_argument(
        "planted_fault must be 1 (hang), 2 (crash) or 3 (wrong result), "
        "got " +
        std::to_string(it->second));
  }
  return it->second;
}

}  // namespace tiletune::kernels
