#include "kernels/core/op_registry.h"

#include <algorithm>
#include <stdexcept>

#include "kernels/core/kernel_key.h"

namespace tiletune::kernels {
namespace {

const AbiField* FindField(const LaunchAbi& abi, std::string_view name) {
  for (const AbiField& f : abi.fields) {
    if (f.name == name) return &f;
  }
  return nullptr;
}

// Why the op's launch ABI does not describe its struct, or empty: fields in
// struct order, each aligned, none overlapping, inside the struct; one field
// of the right kind per dim and tensor, one chain, a float per scalar.
std::string AbiError(const OpSpec& spec) {
  const LaunchAbi& abi = spec.abi;
  size_t end = 0;
  int chains = 0;
  for (const AbiField& f : abi.fields) {
    const size_t bytes = AbiFieldBytes(f.kind);
    if (f.offset < end || f.offset % std::min<size_t>(bytes, alignof(void*)) != 0 ||
        f.offset + bytes > abi.size) {
      return "field " + std::string(f.name) + " overlaps, is misaligned or ends past the struct";
    }
    end = f.offset + bytes;
    chains += f.kind == AbiKind::kChain;
  }
  if (chains != 1) return "needs exactly one chain field";
  const auto expect = [&](std::string_view name, AbiKind kind) -> std::string {
    const AbiField* f = FindField(abi, name);
    return f && f->kind == kind ? "" : "needs a field " + std::string(name) + " of its kind";
  };
  for (const DimArg& d : spec.dims) {
    if (auto e = expect(d.name, AbiKind::kInt64); !e.empty()) return e;
  }
  for (const TensorArg& t : spec.tensors) {
    if (auto e = expect(t.name, AbiKind::kTensor); !e.empty()) return e;
  }
  for (const auto& [name, value] : spec.scalars) {
    if (auto e = expect(name, AbiKind::kFloat32); !e.empty()) return e;
  }
  if (spec.row_values) {
    if (auto e = expect(spec.row_values->field, AbiKind::kTensor); !e.empty()) return e;
  }
  for (const AbiField& f : abi.fields) {
    const bool has_value = std::any_of(spec.scalars.begin(), spec.scalars.end(),
                                       [&](const auto& s) { return s.first == f.name; });
    if (f.kind == AbiKind::kFloat32 && !has_value) {
      return "has float field " + std::string(f.name) + " without a value in OpSpec.scalars";
    }
  }
  return "";
}

// A spec without flops, with a reference that does not fit its fusion kind
// or without exactly one output is a programming error of its op folder:
// refuse it when the registry is first read.
const OpSpec* Checked(const OpSpec& spec) {
  const auto outputs =
      std::count_if(spec.tensors.begin(), spec.tensors.end(),
                    [](const TensorArg& t) { return t.role == TensorRole::kOutput; });
  const int references = (spec.matmul_reference != nullptr) + (spec.row_reference != nullptr) +
                         (spec.attention_reference != nullptr);
  const bool own_reference = spec.fusion == FusionKind::kMatmul ? spec.matmul_reference != nullptr
                             : spec.fusion == FusionKind::kAttention
                                 ? spec.attention_reference != nullptr
                                 : spec.row_reference != nullptr;
  if (!spec.flops || outputs != 1 || references != 1 || !own_reference) {
    throw std::logic_error("op '" + std::string(spec.name) +
                           "': its spec needs flops, one output and exactly the reference of its "
                           "fusion kind");
  }
  // Only the attention reference computes row values.
  if (spec.row_values && !spec.attention_reference) {
    throw std::logic_error("op '" + std::string(spec.name) +
                           "': row values need the attention reference");
  }
  if (const std::string error = AbiError(spec); !error.empty()) {
    throw std::logic_error("op '" + std::string(spec.name) + "': its launch ABI " +
                           std::string(spec.abi.struct_name) + " " + error);
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
  throw std::invalid_argument("unknown op " + Quoted(op) + " (known: " + OpNames() + ")");
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

const TensorArg& OutputTensor(const OpSpec& spec) {
  for (const TensorArg& t : spec.tensors) {
    if (t.role == TensorRole::kOutput) return t;
  }
  throw std::logic_error("op '" + std::string(spec.name) + "' has no output tensor");
}

NamedInts FixedInts(const v1::KernelKey& key, const OpSpec& spec) {
  NamedInts ints;
  for (const DimArg& d : spec.dims) ints[std::string(d.name)] = DimOrDefault(key, spec, d.name);
  if (spec.leading_dims) spec.leading_dims(key, ints);
  return ints;
}

NamedFloats DefaultFloats(const OpSpec& spec) {
  NamedFloats floats;
  for (const auto& [name, value] : spec.scalars) floats[std::string(name)] = value;
  return floats;
}

const AbiField* FindAbiField(const OpSpec& spec, std::string_view name) {
  return FindField(spec.abi, name);
}

std::span<const float> ReferenceArgs::Tensor(std::string_view name) const {
  const auto it = tensors.find(name);
  if (it == tensors.end())
    throw std::out_of_range("the problem has no tensor " + std::string(name));
  return it->second;
}

int64_t ReferenceArgs::Int(std::string_view name) const {
  const auto it = ints.find(name);
  if (it == ints.end()) throw std::out_of_range("the problem has no field " + std::string(name));
  return it->second;
}

double ReferenceArgs::Float(std::string_view name) const {
  const auto it = floats.find(name);
  if (it == floats.end()) throw std::out_of_range("the problem has no field " + std::string(name));
  return it->second;
}

bool HasTensor(const OpSpec& spec, TensorRole role) {
  return std::any_of(spec.tensors.begin(), spec.tensors.end(),
                     [&](const TensorArg& t) { return t.role == role; });
}

}  // namespace tiletune::kernels
