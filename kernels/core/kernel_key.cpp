#include "kernels/core/kernel_key.h"

#include <algorithm>
#include <cmath>
#include <set>
#include <stdexcept>

#include "kernels/core/chain_ops.h"
#include "kernels/core/op_graph.h"
#include "kernels/core/op_registry.h"

namespace tiletune::kernels {
namespace {

// Elements of an op's tensor in a key whose dims are valid; an optional
// dimension the key leaves out has its default size. In long double, which
// holds products of a few dims up to max_dim exactly enough.
long double TensorElements(const v1::KernelKey& key, const OpSpec& spec, const TensorArg& tensor) {
  long double elements = 1;
  for (std::string_view name : tensor.dims) {
    elements *= static_cast<long double>(DimOrDefault(key, spec, name));
  }
  return elements;
}

int64_t Elements(const v1::KernelKey& key, const OpSpec& spec, const TensorArg& tensor) {
  return static_cast<int64_t>(TensorElements(key, spec, tensor));
}

int64_t DTypeBytes(v1::DType dtype) {
  switch (dtype) {
    case v1::DTYPE_F16:
    case v1::DTYPE_BF16: return 2;
    case v1::DTYPE_F64: return 8;
    default: return 4;
  }
}

std::string At(const std::string& prefix, std::string_view field, int index = -1) {
  std::string path = prefix + "." + std::string(field);
  if (index >= 0) path += "[" + std::to_string(index) + "]";
  return path;
}

// Every name the key carries, single-kernel or graph form, before anything
// else looks at (or quotes) them. A field's path is spelled only for the
// name that is too long: valid keys, the lookup path's, build no strings.
std::optional<FieldError> ValidateNameLengths(const v1::KernelKey& key, const KeyLimits& limits,
                                              const std::string& prefix) {
  std::optional<FieldError> error;
  const auto check = [&](std::string_view name, const auto& field) {
    if (error || static_cast<int64_t>(name.size()) <= limits.max_name_bytes) return;
    error = CheckLength(name, limits.max_name_bytes, "max_name_bytes", field());
  };
  check(key.op(), [&] { return At(prefix, "op"); });
  for (int i = 0; i < key.chain_size(); ++i) {
    check(key.chain(i).op(), [&] { return At(prefix, "chain", i) + ".op"; });
  }
  for (int i = 0; i < key.prologue_size(); ++i) {
    check(key.prologue(i).op(), [&] { return At(prefix, "prologue", i) + ".op"; });
  }
  for (int i = 0; i < key.layouts_size(); ++i) {
    check(key.layouts(i).tensor(), [&] { return At(prefix, "layouts", i) + ".tensor"; });
  }
  for (int i = 0; i < key.shape_size(); ++i) {
    check(key.shape(i).name(), [&] { return At(prefix, "shape", i) + ".name"; });
  }
  for (int i = 0; i < key.ops_size(); ++i) {
    const auto& op = key.ops(i);
    check(op.op(), [&] { return At(prefix, "ops", i) + ".op"; });
    for (int j = 0; j < op.inputs_size(); ++j) {
      check(op.inputs(j),
            [&] { return At(prefix, "ops", i) + ".inputs[" + std::to_string(j) + "]"; });
    }
    check(op.output(), [&] { return At(prefix, "ops", i) + ".output"; });
  }
  for (int i = 0; i < key.tensors_size(); ++i) {
    const auto& t = key.tensors(i);
    check(t.name(), [&] { return At(prefix, "tensors", i) + ".name"; });
    for (int j = 0; j < t.dims_size(); ++j) {
      check(t.dims(j),
            [&] { return At(prefix, "tensors", i) + ".dims[" + std::to_string(j) + "]"; });
    }
  }
  for (int i = 0; i < key.outputs_size(); ++i) {
    check(key.outputs(i), [&] { return At(prefix, "outputs", i); });
  }
  return error;
}

// The runtime scalars (chain, prologue and graph ops) must be finite: a NaN
// or Infinity would poison every validation of a job tuning the key.
std::optional<FieldError> ValidateScalars(const v1::KernelKey& key, const std::string& prefix) {
  const auto finite = [&](double value, std::string_view field,
                          int i) -> std::optional<FieldError> {
    if (std::isfinite(value)) return std::nullopt;
    return FieldError{At(prefix, field, i) + ".scalar", "must be a finite number"};
  };
  for (int i = 0; i < key.chain_size(); ++i) {
    if (auto e = finite(key.chain(i).scalar(), "chain", i)) return e;
  }
  for (int i = 0; i < key.prologue_size(); ++i) {
    if (auto e = finite(key.prologue(i).scalar(), "prologue", i)) return e;
  }
  for (int i = 0; i < key.ops_size(); ++i) {
    if (auto e = finite(key.ops(i).scalar(), "ops", i)) return e;
  }
  return std::nullopt;
}

// Checks one list of element-wise ops (the epilogue chain or the prologue).
std::optional<FieldError> ValidateChainOps(
    const google::protobuf::RepeatedPtrField<v1::ChainOp>& ops, const std::string& prefix,
    std::string_view field) {
  for (int i = 0; i < ops.size(); ++i) {
    const auto& op = ops[i];
    const auto path = [&] { return At(prefix, field, i); };
    if (!IsKnownChainOp(op.op())) {
      return FieldError{path() + ".op", "unknown chain op " + Quoted(op.op()) +
                                            " (known: bias, scale, relu, gelu_tanh, gelu_erf, "
                                            "silu, residual_add, cast)"};
    }
    if (op.op() == "cast" && field == "prologue") {
      return FieldError{path() + ".op", "a prologue cannot cast: the kernel reads its input type"};
    }
    if (op.op() == "cast" && op.dtype() == v1::DTYPE_UNSPECIFIED) {
      return FieldError{path() + ".dtype", "cast needs a target dtype"};
    }
    if (op.op() == "cast" && i + 1 != ops.size()) {
      return FieldError{path(), "cast must be the last op of a chain"};
    }
  }
  return std::nullopt;
}

// Names unique, sizes positive and within max_dim; `spec` null: any name,
// else the names of its dims.
std::optional<FieldError> ValidateDims(const v1::KernelKey& key, const KeyLimits& limits,
                                       const std::string& prefix, const OpSpec* spec) {
  std::set<std::string_view> seen;
  for (int i = 0; i < key.shape_size(); ++i) {
    const auto& d = key.shape(i);
    if (spec && std::none_of(spec->dims.begin(), spec->dims.end(),
                             [&](const DimArg& a) { return a.name == d.name(); })) {
      std::string names;
      for (const DimArg& a : spec->dims) names += (names.empty() ? "" : ", ") + std::string(a.name);
      return FieldError{
          At(prefix, "shape", i) + ".name",
          Quoted(d.name()) + " is not a dimension of " + key.op() + " (" + names + ")"};
    }
    if (d.name().empty()) return FieldError{At(prefix, "shape", i) + ".name", "is required"};
    if (!seen.insert(d.name()).second) {
      return FieldError{At(prefix, "shape", i) + ".name",
                        "dimension " + Quoted(d.name()) + " repeats"};
    }
    if (d.size() <= 0) {
      return FieldError{At(prefix, "shape", i) + ".size",
                        Quoted(d.name()) + " must be positive, got " + std::to_string(d.size())};
    }
    if (d.size() > limits.max_dim) {
      return FieldError{At(prefix, "shape", i) + ".size",
                        Quoted(d.name()) + "=" + std::to_string(d.size()) + " exceeds max_dim " +
                            std::to_string(limits.max_dim)};
    }
  }
  return std::nullopt;
}

// A graph key holds only ops, tensors, outputs and shape; the rest is the
// planner's to fill per kernel.
std::optional<FieldError> ValidateGraphKey(const v1::KernelKey& key, const KeyLimits& limits,
                                           const std::string& prefix) {
  if (!key.op().empty()) return FieldError{At(prefix, "op"), "must be empty in an op graph key"};
  if (key.chain_size() > 0 || key.prologue_size() > 0) {
    return FieldError{At(prefix, key.chain_size() > 0 ? "chain" : "prologue"),
                      "must be empty in an op graph key: element-wise ops are graph ops"};
  }
  if (key.input_dtype() != v1::DTYPE_UNSPECIFIED || key.output_dtype() != v1::DTYPE_UNSPECIFIED) {
    return FieldError{
        At(prefix, key.input_dtype() != v1::DTYPE_UNSPECIFIED ? "input_dtype" : "output_dtype"),
        "must be unspecified in an op graph key: tensors carry their dtypes"};
  }
  if (key.layouts_size() > 0) {
    return FieldError{At(prefix, "layouts"), "op graph tensors are row-major; leave it empty"};
  }
  if (key.write_prologue_output()) {
    return FieldError{At(prefix, "write_prologue_output"),
                      "must be false in an op graph key: list the tensor in outputs"};
  }
  if (auto e = ValidateDims(key, limits, prefix, nullptr)) return e;
  if (auto e = fusion::ValidateOpGraph(key, limits, prefix)) return e;
  return ValidateScalars(key, prefix);
}

// Entries of `entries` sorted by name, the last of each name kept: what a
// std::map filled in order would hold, in one small vector.
template <typename Value>
void SortKeepingLast(std::vector<std::pair<std::string_view, Value>>& entries) {
  std::stable_sort(entries.begin(), entries.end(),
                   [](const auto& a, const auto& b) { return a.first < b.first; });
  size_t kept = 0;
  for (size_t i = 0; i < entries.size(); ++i) {
    if (i + 1 < entries.size() && entries[i + 1].first == entries[i].first) continue;
    entries[kept++] = entries[i];
  }
  entries.resize(kept);
}

// What normalizing a single-kernel key fills in and orders, viewed in place
// (names point into the key and the op registry): defaulted dtypes, every
// layout-bearing tensor's layout by name (row-major when the key does not
// say), the dims by name without optional ones at their default size.
struct NormalForm {
  explicit NormalForm(const v1::KernelKey& key)
      : input_dtype(key.input_dtype()),
        output_dtype(key.output_dtype() == v1::DTYPE_UNSPECIFIED ? key.input_dtype()
                                                                 : key.output_dtype()),
        accumulate_dtype(key.accumulate_dtype() == v1::DTYPE_UNSPECIFIED ? v1::DTYPE_F32
                                                                         : key.accumulate_dtype()) {
    // A key not validated may name no known op: it normalizes as the
    // element-wise op, as such keys always have.
    const OpSpec* spec = FindOpSpec(key.op());
    if (!spec) spec = &KernelOpFor(FusionKind::kElementwise);
    for (const TensorArg& t : spec->tensors) {
      if (t.layout != LayoutRule::kNone) layouts.emplace_back(t.name, v1::LAYOUT_ROW_MAJOR);
    }
    for (const auto& l : key.layouts()) layouts.emplace_back(l.tensor(), l.layout());
    SortKeepingLast(layouts);
    for (const auto& d : key.shape()) shape.emplace_back(d.name(), d.size());
    SortKeepingLast(shape);
    std::erase_if(shape, [&](const auto& dim) {
      return std::any_of(spec->dims.begin(), spec->dims.end(), [&](const DimArg& d) {
        return !d.required && d.name == dim.first && d.default_size == dim.second;
      });
    });
  }

  // An epilogue op's tensors default to the output type (a cast says its
  // own); a prologue works on the input, so its tensors default to that.
  v1::DType ChainDType(const v1::ChainOp& op) const {
    return op.op() != "cast" && op.dtype() == v1::DTYPE_UNSPECIFIED ? output_dtype : op.dtype();
  }
  v1::DType PrologueDType(const v1::ChainOp& op) const {
    return op.dtype() == v1::DTYPE_UNSPECIFIED ? input_dtype : op.dtype();
  }

  v1::DType input_dtype;
  v1::DType output_dtype;
  v1::DType accumulate_dtype;
  std::vector<std::pair<std::string_view, v1::Layout>> layouts;
  std::vector<std::pair<std::string_view, int64_t>> shape;
};

}  // namespace

std::string Abbreviated(std::string_view text, std::size_t max_bytes) {
  if (text.size() <= max_bytes) return std::string(text);
  std::size_t cut = max_bytes;
  // Not inside a character: back up over UTF-8 continuation bytes.
  while (cut > 0 && (static_cast<unsigned char>(text[cut]) & 0xC0) == 0x80) --cut;
  return std::string(text.substr(0, cut)) + "…";
}

std::string Quoted(std::string_view value) {
  // Whole for the names keys use; short enough for any message.
  constexpr std::size_t kShownBytes = 32;
  if (value.size() <= kShownBytes) return "'" + std::string(value) + "'";
  return "'" + Abbreviated(value, kShownBytes) + "' (" + std::to_string(value.size()) + " bytes)";
}

std::optional<FieldError> CheckLength(std::string_view value, int64_t max_bytes,
                                      std::string_view limit, const std::string& field) {
  if (static_cast<int64_t>(value.size()) <= max_bytes) return std::nullopt;
  return FieldError{field, "is " + std::to_string(value.size()) + " bytes; the limit is " +
                               std::string(limit) + " " + std::to_string(max_bytes)};
}

bool IsKnownOp(std::string_view op) {
  return FindOpSpec(op) != nullptr;
}

bool IsGraphKey(const v1::KernelKey& key) {
  return key.ops_size() > 0;
}

bool IsKnownChainOp(std::string_view op) {
  static const std::set<std::string_view> kOps = {"bias",     "scale", "relu",         "gelu_tanh",
                                                  "gelu_erf", "silu",  "residual_add", "cast"};
  return kOps.contains(op);
}

std::string_view DTypeName(v1::DType dtype) {
  switch (dtype) {
    case v1::DTYPE_F32: return "f32";
    case v1::DTYPE_F16: return "f16";
    case v1::DTYPE_BF16: return "bf16";
    case v1::DTYPE_F64: return "f64";
    default: return "unspecified";
  }
}

std::optional<v1::DType> ParseDType(std::string_view name) {
  for (auto d : {v1::DTYPE_F32, v1::DTYPE_F16, v1::DTYPE_BF16, v1::DTYPE_F64}) {
    if (DTypeName(d) == name) return d;
  }
  return std::nullopt;
}

std::string_view AttentionMaskName(v1::AttentionMask mask) {
  switch (mask) {
    case v1::ATTENTION_MASK_NONE: return "none";
    case v1::ATTENTION_MASK_CAUSAL: return "causal";
    case v1::ATTENTION_MASK_TENSOR: return "tensor";
    default: return "unspecified";
  }
}

std::string_view SequenceLayoutName(v1::SequenceLayout layout) {
  switch (layout) {
    case v1::SEQUENCE_LAYOUT_BSHD: return "bshd";
    case v1::SEQUENCE_LAYOUT_BHSD: return "bhsd";
    default: return "unspecified";
  }
}

std::string_view GateName(v1::Gate gate) {
  switch (gate) {
    case v1::GATE_NONE: return "none";
    case v1::GATE_SWIGLU: return "swiglu";
    default: return "unspecified";
  }
}

std::string_view LayoutName(v1::Layout layout) {
  switch (layout) {
    case v1::LAYOUT_ROW_MAJOR: return "row";
    case v1::LAYOUT_COL_MAJOR: return "col";
    default: return "unspecified";
  }
}

std::optional<v1::Layout> ParseLayout(std::string_view name) {
  if (name == "row") return v1::LAYOUT_ROW_MAJOR;
  if (name == "col") return v1::LAYOUT_COL_MAJOR;
  return std::nullopt;
}

std::vector<v1::ChainOp> ChainArgumentOps(const v1::KernelKey& key) {
  std::vector<v1::ChainOp> ops(key.prologue().begin(), key.prologue().end());
  ops.insert(ops.end(), key.chain().begin(), key.chain().end());
  return ops;
}

std::optional<int64_t> DimSize(const v1::KernelKey& key, std::string_view name) {
  for (const auto& d : key.shape()) {
    if (d.name() == name) return d.size();
  }
  return std::nullopt;
}

std::optional<FieldError> ValidateKernelKey(const v1::KernelKey& key, const KeyLimits& limits,
                                            const std::string& prefix) {
  if (auto e = ValidateNameLengths(key, limits, prefix)) return e;
  if (IsGraphKey(key)) return ValidateGraphKey(key, limits, prefix);
  if (key.op().empty()) return FieldError{At(prefix, "op"), "is required"};
  const OpSpec* spec = FindOpSpec(key.op());
  if (!spec) {
    return FieldError{At(prefix, "op"), "unknown op " + Quoted(key.op()) + " (known: " + OpNames() +
                                            "; or an op graph in ops)"};
  }
  if (key.chain_size() + key.prologue_size() > limits.max_chain_length) {
    return FieldError{At(prefix, key.prologue_size() > 0 ? "prologue" : "chain"),
                      "prologue and chain have " +
                          std::to_string(key.chain_size() + key.prologue_size()) +
                          " ops; the limit is " + std::to_string(limits.max_chain_length)};
  }
  if (auto e = ValidateChainOps(key.chain(), prefix, "chain")) return e;
  if (key.prologue_size() > 0 && !spec->no_prologue_reason.empty()) {
    return FieldError{At(prefix, "prologue"),
                      key.op() + " takes no prologue: " + std::string(spec->no_prologue_reason)};
  }
  if (auto e = ValidateChainOps(key.prologue(), prefix, "prologue")) return e;
  if (key.write_prologue_output() &&
      (key.prologue_size() == 0 || spec->fusion != FusionKind::kRowReduction)) {
    return FieldError{At(prefix, "write_prologue_output"),
                      "needs a row op (" + OpNames(FusionKind::kRowReduction) +
                          ") with a prologue; this key is " + key.op() + " with " +
                          std::to_string(key.prologue_size()) + " prologue ops"};
  }
  if (spec->fusion != FusionKind::kAttention) {
    const auto attention_field = [&]() -> const char* {
      if (key.attention_mask() != v1::ATTENTION_MASK_NONE) return "attention_mask";
      if (key.sequence_layout() != v1::SEQUENCE_LAYOUT_BSHD) return "sequence_layout";
      if (key.write_lse()) return "write_lse";
      return nullptr;
    }();
    if (attention_field) {
      return FieldError{
          At(prefix, attention_field),
          "belongs to " + OpNames(FusionKind::kAttention) + "; this key is " + key.op()};
    }
  }
  if (!v1::Gate_IsValid(key.gate())) {
    return FieldError{At(prefix, "gate"), "must be none or swiglu"};
  }
  if (key.gate() != v1::GATE_NONE && spec->fusion != FusionKind::kMatmul) {
    return FieldError{At(prefix, "gate"),
                      "belongs to " + OpNames(FusionKind::kMatmul) + "; this key is " + key.op()};
  }
  if (!key.tensors().empty() || !key.outputs().empty()) {
    return FieldError{At(prefix, key.tensors().empty() ? "outputs" : "tensors"),
                      "belongs to an op graph (ops); a single-kernel key has none"};
  }
  const struct {
    const char* field;
    v1::DType value;
  } dtypes[] = {{"input_dtype", key.input_dtype()},
                {"output_dtype", key.output_dtype()},
                {"accumulate_dtype", key.accumulate_dtype()}};
  for (const auto& d : dtypes) {
    if (!v1::DType_IsValid(d.value)) {
      return FieldError{At(prefix, d.field), "is not a known dtype"};
    }
  }
  if (key.input_dtype() == v1::DTYPE_UNSPECIFIED) {
    return FieldError{At(prefix, "input_dtype"), "is required (f32, f16, bf16)"};
  }
  if (key.input_dtype() == v1::DTYPE_F64) {
    return FieldError{At(prefix, "input_dtype"), "f64 is not supported (f32, f16, bf16)"};
  }
  if (key.accumulate_dtype() != v1::DTYPE_UNSPECIFIED && key.accumulate_dtype() != v1::DTYPE_F32) {
    return FieldError{At(prefix, "accumulate_dtype"), "only f32 accumulation is supported"};
  }
  if (key.allow_tf32() && (!spec->allows_tf32 || key.input_dtype() != v1::DTYPE_F32)) {
    return FieldError{At(prefix, "allow_tf32"),
                      "tf32 rounds the f32 inputs of a " +
                          OpNamesWhere([](const OpSpec& s) { return s.allows_tf32; }) +
                          "; this key is " + key.op() + " with " +
                          std::string(DTypeName(key.input_dtype())) + " inputs"};
  }

  if (auto e = ValidateDims(key, limits, prefix, spec)) return e;
  for (const DimArg& d : spec->dims) {
    if (d.required && !DimSize(key, d.name)) {
      return FieldError{At(prefix, "shape"),
                        "dimension '" + std::string(d.name) + "' is required for " + key.op()};
    }
  }
  if (spec->key_rules) {
    if (auto rule = spec->key_rules(key)) return FieldError{At(prefix, rule->first), rule->second};
  }
  // The largest tensor the problem touches.
  long double elements = 0;
  for (const TensorArg& t : spec->tensors) {
    elements = std::max(elements, TensorElements(key, *spec, t));
  }
  if (elements > static_cast<long double>(limits.max_elements)) {
    return FieldError{At(prefix, "shape"), "a tensor of the problem has more than max_elements " +
                                               std::to_string(limits.max_elements) + " elements"};
  }

  const auto layout_names = [&] {
    std::string names;
    for (const TensorArg& t : spec->tensors) {
      if (t.layout != LayoutRule::kNone) names += (names.empty() ? "" : ", ") + std::string(t.name);
    }
    return names;
  };
  for (int i = 0; i < key.layouts_size(); ++i) {
    const auto& l = key.layouts(i);
    const TensorArg* tensor = FindTensor(*spec, l.tensor());
    if (!tensor || tensor->layout == LayoutRule::kNone) {
      return FieldError{
          At(prefix, "layouts", i) + ".tensor",
          Quoted(l.tensor()) + " is not a tensor of " + key.op() + " (" + layout_names() + ")"};
    }
    if (l.layout() == v1::LAYOUT_UNSPECIFIED || !v1::Layout_IsValid(l.layout())) {
      return FieldError{At(prefix, "layouts", i) + ".layout", "must be row or col"};
    }
    if (tensor->layout == LayoutRule::kRowOnly && l.layout() != v1::LAYOUT_ROW_MAJOR) {
      return FieldError{
          At(prefix, "layouts", i) + ".layout",
          key.op() + " reduces along rows: " + Quoted(l.tensor()) + " must be row-major"};
    }
    // Every earlier entry names one of the op's few tensors, so this scan is
    // short.
    for (int j = 0; j < i; ++j) {
      if (key.layouts(j).tensor() == l.tensor()) {
        return FieldError{At(prefix, "layouts", i) + ".tensor",
                          "layout for " + Quoted(l.tensor()) + " repeats"};
      }
    }
  }
  return ValidateScalars(key, prefix);
}

v1::KernelKey NormalizeKernelKey(const v1::KernelKey& key) {
  v1::KernelKey out = key;
  if (IsGraphKey(key)) return out;
  const NormalForm form(key);
  out.set_output_dtype(form.output_dtype);
  out.set_accumulate_dtype(form.accumulate_dtype);
  out.clear_layouts();
  for (const auto& [tensor, layout] : form.layouts) {
    auto* l = out.add_layouts();
    l->set_tensor(std::string(tensor));
    l->set_layout(layout);
  }
  out.clear_shape();
  for (const auto& [name, size] : form.shape) {
    auto* d = out.add_shape();
    d->set_name(std::string(name));
    d->set_size(size);
  }
  for (auto& op : *out.mutable_chain()) {
    if (op.op() != "scale") op.set_scalar(0);
    op.set_dtype(form.ChainDType(op));
  }
  for (auto& op : *out.mutable_prologue()) {
    if (op.op() != "scale") op.set_scalar(0);
    op.set_dtype(form.PrologueDType(op));
  }
  return out;
}

std::string CanonicalKeyString(const v1::KernelKey& key) {
  if (IsGraphKey(key)) {
    throw std::invalid_argument("an op graph key has no canonical string: plan it into kernels");
  }
  // Spelled from the key's normal form in place: the lookup path asks for
  // this once per call, and copying the key to normalize it cost more than
  // the string.
  const NormalForm form(key);
  std::string s;
  s.reserve(128);
  const auto add_ops = [&](const google::protobuf::RepeatedPtrField<v1::ChainOp>& ops,
                           auto dtype_of) {
    for (int i = 0; i < ops.size(); ++i) {
      if (i) s += ',';
      s += ops[i].op();
      s += ':';
      s += DTypeName(dtype_of(ops[i]));
    }
  };
  s += key.op();
  // Only keys with a prologue spell it, so the strings of older keys (and
  // their database records) stay as they were.
  if (key.prologue_size() > 0) {
    s += "|prologue=";
    add_ops(key.prologue(), [&](const v1::ChainOp& op) { return form.PrologueDType(op); });
  }
  // Likewise the second output, spelled only when written.
  if (key.write_prologue_output()) s += "|prologue_out";
  s += "|chain=";
  add_ops(key.chain(), [&](const v1::ChainOp& op) { return form.ChainDType(op); });
  s += "|in=";
  s += DTypeName(key.input_dtype());
  s += "|out=";
  s += DTypeName(form.output_dtype);
  s += "|acc=";
  s += DTypeName(form.accumulate_dtype);
  s += "|layout=";
  for (size_t i = 0; i < form.layouts.size(); ++i) {
    if (i) s += ',';
    s += form.layouts[i].first;
    s += ':';
    s += LayoutName(form.layouts[i].second);
  }
  s += "|shape=";
  for (size_t i = 0; i < form.shape.size(); ++i) {
    if (i) s += ',';
    s += form.shape[i].first;
    s += '=';
    s += std::to_string(form.shape[i].second);
  }
  // Only when set: keys stored before the field existed keep their strings.
  if (key.allow_tf32()) s += "|tf32";
  if (key.gate() != v1::GATE_NONE) {
    s += "|gate=";
    s += GateName(key.gate());
  }
  if (FindOpSpec(key.op()) && OpSpecOf(key.op()).fusion == FusionKind::kAttention) {
    s += "|mask=";
    s += AttentionMaskName(key.attention_mask());
    s += "|seq=";
    s += SequenceLayoutName(key.sequence_layout());
    if (key.write_lse()) s += "|lse";
  }
  return s;
}

int64_t ProblemFlops(const v1::KernelKey& key) {
  const OpSpec& spec = OpSpecOf(key.op());
  const int64_t own = spec.flops(key);
  if (!spec.counts_chain_flops) return own;
  return own + (key.chain_size() + key.prologue_size()) * Elements(key, spec, OutputTensor(spec));
}

int64_t ProblemBytes(const v1::KernelKey& raw_key) {
  const v1::KernelKey key = NormalizeKernelKey(raw_key);
  const OpSpec& spec = OpSpecOf(key.op());
  const TensorArg& output = OutputTensor(spec);
  const int64_t output_elements = Elements(key, spec, output);
  int64_t bytes = 0;
  for (const TensorArg& t : spec.tensors) {
    const v1::DType dtype = t.role == TensorRole::kOutput ? key.output_dtype() : key.input_dtype();
    bytes += Elements(key, spec, t) * DTypeBytes(dtype);
  }
  // bias is per column of the output, residual_add shaped like it.
  const int64_t columns = DimSize(key, output.dims.back()).value_or(0);
  for (const auto& op : ChainArgumentOps(key)) {
    switch (ChainTensorOf(op)) {
      case ChainTensor::kPerColumn: bytes += columns * DTypeBytes(op.dtype()); break;
      case ChainTensor::kLikeOutput: bytes += output_elements * DTypeBytes(op.dtype()); break;
      case ChainTensor::kNone: break;
    }
  }
  if (key.write_prologue_output()) bytes += output_elements * DTypeBytes(key.input_dtype());
  if (spec.optional_tensor_bytes) bytes += spec.optional_tensor_bytes(key);
  return bytes;
}

int64_t DimOrDefault(const v1::KernelKey& key, const OpSpec& spec, std::string_view name) {
  const auto dim = std::find_if(spec.dims.begin(), spec.dims.end(),
                                [&](const DimArg& d) { return d.name == name; });
  return DimSize(key, name).value_or(dim == spec.dims.end() ? 0 : dim->default_size);
}

bool IsColMajor(const v1::KernelKey& key, std::string_view tensor) {
  for (const auto& l : key.layouts()) {
    if (l.tensor() == tensor) return l.layout() == v1::LAYOUT_COL_MAJOR;
  }
  return false;
}

}  // namespace tiletune::kernels
