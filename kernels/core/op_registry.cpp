#include "kernels/core/op_registry.h"

#include <algorithm>
#include <stdexcept>

namespace tiletune::kernels {
namespace {

// A spec without flops, with a reference that does not fit its fusion kind
// or without exactly one output is a programming error of its op folder:
// refuse it when the registry is first read.
const OpSpec* Checked(const OpSpec& spec) {
  const bool matmul = spec.fusion == FusionKind::kMatmul;
  const auto outputs =
      std::count_if(spec.tensors.begin(), spec.tensors.end(),
                    [](const TensorArg& t) { return t.role == TensorRole::kOutput; });
  if (!spec.flops || outputs != 1 ||
      (matmul ? !spec.matmul_reference || spec.row_reference
              : !spec.row_reference || spec.matmul_reference)) {
    throw std::logic_error("op '" + std::string(spec.name) +
                           "': its spec needs flops, one output and exactly the reference of its "
                           "fusion kind");
  }
  return &spec;
}

}  // namespace

const std::vector<const OpSpec*>& AllOpSpecs() {
  static const std::vector<const OpSpec*> kSpecs = [] {
    std::vector<const OpSpec*> specs;
    for (const OpSpec* spec : RegisteredOps()) specs.push_back(Checked(*spec));
    return specs;
  }();
  return kSpecs;
}

const OpSpec* FindOpSpec(std::string_view op) {
  const auto& specs = AllOpSpecs();
  const auto it =
      std::find_if(specs.begin(), specs.end(), [&](const OpSpec* s) { return s->name == op; });
  return it == specs.end() ? nullptr : *it;
}

const OpSpec& OpSpecOf(std::string_view op) {
  if (const OpSpec* spec = FindOpSpec(op)) return *spec;
  throw std::invalid_argument("unknown op '" + std::string(op) + "' (known: " + OpNames() + ")");
}

const OpSpec& KernelOpFor(FusionKind kind) {
  const OpSpec* found = nullptr;
  for (const OpSpec* spec : AllOpSpecs()) {
    if (spec->fusion != kind) continue;
    if (found) throw std::logic_error("two ops of one fusion kind: " + OpNames(kind));
    found = spec;
  }
  if (!found) throw std::logic_error("no op of the fusion kind asked for");
  return *found;
}

std::string OpNamesWhere(const std::function<bool(const OpSpec&)>& pick) {
  std::string names;
  for (const OpSpec* spec : AllOpSpecs()) {
    if (pick(*spec)) names += (names.empty() ? "" : ", ") + std::string(spec->name);
  }
  return names;
}

std::string OpNames(FusionKind kind) {
  return OpNamesWhere([kind](const OpSpec& spec) { return spec.fusion == kind; });
}

std::string OpNames() {
  return OpNamesWhere([](const OpSpec&) { return true; });
}

const TensorArg* FindTensor(const OpSpec& spec, std::string_view name) {
  for (const TensorArg& t : spec.tensors) {
    if (t.name == name) return &t;
  }
  return nullptr;
}

bool HasTensor(const OpSpec& spec, TensorRole role) {
  return std::any_of(spec.tensors.begin(), spec.tensors.end(),
                     [&](const TensorArg& t) { return t.role == role; });
}

}  // namespace tiletune::kernels
