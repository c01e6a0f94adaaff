#include "kernels/core/kernel_key.h"

#include <algorithm>
#include <array>
#include <map>
#include <set>
#include <stdexcept>

#include "kernels/fusion/op_graph.h"

namespace tiletune::kernels {
namespace {

constexpr std::array kGemmDims = {"m", "n", "k", "batch"};
constexpr std::array kRowDims = {"rows", "cols"};

bool IsRowOp(std::string_view op) {
  return op == "softmax" || op == "rmsnorm" || op == "layernorm" || op == "elementwise";
}

std::string At(const std::string& prefix, std::string_view field, int index = -1) {
  std::string path = prefix + "." + std::string(field);
  if (index >= 0) path += "[" + std::to_string(index) + "]";
  return path;
}

// Checks one list of element-wise ops (the epilogue chain or the prologue).
std::optional<FieldError> ValidateChainOps(
    const google::protobuf::RepeatedPtrField<v1::ChainOp>& ops, const std::string& prefix,
    std::string_view field) {
  for (int i = 0; i < ops.size(); ++i) {
    const auto& op = ops[i];
    const std::string path = prefix + "." + std::string(field) + "[" + std::to_string(i) + "]";
    if (!IsKnownChainOp(op.op())) {
      return FieldError{path + ".op", "unknown chain op '" + op.op() +
                                          "' (known: bias, scale, relu, gelu_tanh, gelu_erf, "
                                          "silu, residual_add, cast)"};
    }
    if (op.op() == "cast" && field == "prologue") {
      return FieldError{path + ".op", "a prologue cannot cast: the kernel reads its input type"};
    }
    if (op.op() == "cast" && op.dtype() == v1::DTYPE_UNSPECIFIED) {
      return FieldError{path + ".dtype", "cast needs a target dtype"};
    }
    if (op.op() == "cast" && i + 1 != ops.size()) {
      return FieldError{path, "cast must be the last op of a chain"};
    }
  }
  return std::nullopt;
}

// Names unique, sizes positive and within max_dim; `allowed` empty: any name.
std::optional<FieldError> ValidateDims(const v1::KernelKey& key, const KeyLimits& limits,
                                       const std::string& prefix,
                                       const std::vector<std::string>& allowed) {
  std::set<std::string> seen;
  for (int i = 0; i < key.shape_size(); ++i) {
    const auto& d = key.shape(i);
    if (!allowed.empty() && std::find(allowed.begin(), allowed.end(), d.name()) == allowed.end()) {
      std::string names;
      for (const auto& n : allowed) names += (names.empty() ? "" : ", ") + n;
      return FieldError{
          At(prefix, "shape", i) + ".name",
          "'" + d.name() + "' is not a dimension of " + key.op() + " (" + names + ")"};
    }
    if (d.name().empty()) return FieldError{At(prefix, "shape", i) + ".name", "is required"};
    if (!seen.insert(d.name()).second) {
      return FieldError{At(prefix, "shape", i) + ".name", "dimension '" + d.name() + "' repeats"};
    }
    if (d.size() <= 0) {
      return FieldError{At(prefix, "shape", i) + ".size",
                        d.name() + " must be positive, got " + std::to_string(d.size())};
    }
    if (d.size() > limits.max_dim) {
      return FieldError{At(prefix, "shape", i) + ".size",
                        d.name() + "=" + std::to_string(d.size()) + " exceeds max_dim " +
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
  if (auto e = ValidateDims(key, limits, prefix, {})) return e;
  return fusion::ValidateOpGraph(key, limits, prefix);
}

}  // namespace

bool IsKnownOp(std::string_view op) {
  return op == "gemm" || IsRowOp(op);
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
  if (IsGraphKey(key)) return ValidateGraphKey(key, limits, prefix);
  if (key.op().empty()) return FieldError{At(prefix, "op"), "is required"};
  if (!IsKnownOp(key.op())) {
    return FieldError{At(prefix, "op"), "unknown op '" + key.op() +
                                            "' (known: gemm, softmax, rmsnorm, layernorm, "
                                            "elementwise; or an op graph in ops)"};
  }
  if (key.chain_size() + key.prologue_size() > limits.max_chain_length) {
    return FieldError{At(prefix, key.prologue_size() > 0 ? "prologue" : "chain"),
                      "prologue and chain have " +
                          std::to_string(key.chain_size() + key.prologue_size()) +
                          " ops; the limit is " + std::to_string(limits.max_chain_length)};
  }
  if (auto e = ValidateChainOps(key.chain(), prefix, "chain")) return e;
  if (key.prologue_size() > 0 && key.op() == "gemm") {
    return FieldError{At(prefix, "prologue"),
                      "gemm takes no prologue: its templates read A and B as stored"};
  }
  if (auto e = ValidateChainOps(key.prologue(), prefix, "prologue")) return e;
  if (key.write_prologue_output() &&
      (key.prologue_size() == 0 || !IsRowOp(key.op()) || key.op() == "elementwise")) {
    return FieldError{At(prefix, "write_prologue_output"),
                      "needs a row op (softmax, rmsnorm, layernorm) with a prologue; this key is " +
                          key.op() + " with " + std::to_string(key.prologue_size()) +
                          " prologue ops"};
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
  if (key.allow_tf32() && (key.op() != "gemm" || key.input_dtype() != v1::DTYPE_F32)) {
    return FieldError{At(prefix, "allow_tf32"),
                      "tf32 rounds the f32 inputs of a gemm; this key is " + key.op() + " with " +
                          std::string(DTypeName(key.input_dtype())) + " inputs"};
  }

  const bool gemm = key.op() == "gemm";
  if (auto e = ValidateDims(key, limits, prefix,
                            gemm ? std::vector<std::string>(kGemmDims.begin(), kGemmDims.end())
                                 : std::vector<std::string>(kRowDims.begin(), kRowDims.end()))) {
    return e;
  }
  std::set<std::string> seen;
  for (const auto& d : key.shape()) seen.insert(d.name());
  for (const char* required :
       gemm ? std::vector<const char*>{"m", "n", "k"} : std::vector<const char*>{"rows", "cols"}) {
    if (!seen.contains(required)) {
      return FieldError{At(prefix, "shape"),
                        std::string("dimension '") + required + "' is required for " + key.op()};
    }
  }
  // The largest tensor the problem touches; every factor is <= max_dim, so
  // long double holds the products exactly enough.
  const auto dim = [&](const char* name, int64_t fallback) -> long double {
    return static_cast<long double>(DimSize(key, name).value_or(fallback));
  };
  const long double elements =
      gemm ? dim("batch", 1) * std::max({dim("m", 1) * dim("k", 1), dim("k", 1) * dim("n", 1),
                                         dim("m", 1) * dim("n", 1)})
           : dim("rows", 1) * dim("cols", 1);
  if (elements > static_cast<long double>(limits.max_elements)) {
    return FieldError{At(prefix, "shape"), "a tensor of the problem has more than max_elements " +
                                               std::to_string(limits.max_elements) + " elements"};
  }

  std::set<std::string> layout_tensors;
  for (int i = 0; i < key.layouts_size(); ++i) {
    const auto& l = key.layouts(i);
    const bool known = gemm ? (l.tensor() == "a" || l.tensor() == "b") : l.tensor() == "x";
    if (!known) {
      return FieldError{
          At(prefix, "layouts", i) + ".tensor",
          "'" + l.tensor() + "' is not a tensor of " + key.op() + (gemm ? " (a, b)" : " (x)")};
    }
    if (l.layout() == v1::LAYOUT_UNSPECIFIED || !v1::Layout_IsValid(l.layout())) {
      return FieldError{At(prefix, "layouts", i) + ".layout", "must be row or col"};
    }
    if (!gemm && l.layout() != v1::LAYOUT_ROW_MAJOR) {
      return FieldError{At(prefix, "layouts", i) + ".layout",
                        key.op() + " reduces along rows: x must be row-major"};
    }
    if (!layout_tensors.insert(l.tensor()).second) {
      return FieldError{At(prefix, "layouts", i) + ".tensor",
                        "layout for '" + l.tensor() + "' repeats"};
    }
  }
  return std::nullopt;
}

v1::KernelKey NormalizeKernelKey(const v1::KernelKey& key) {
  v1::KernelKey out = key;
  if (IsGraphKey(key)) return out;
  if (out.accumulate_dtype() == v1::DTYPE_UNSPECIFIED) out.set_accumulate_dtype(v1::DTYPE_F32);
  if (out.output_dtype() == v1::DTYPE_UNSPECIFIED) out.set_output_dtype(out.input_dtype());
  std::map<std::string, v1::Layout> layouts;
  for (const char* t :
       out.op() == "gemm" ? std::vector<const char*>{"a", "b"} : std::vector<const char*>{"x"}) {
    layouts[t] = v1::LAYOUT_ROW_MAJOR;
  }
  for (const auto& l : key.layouts()) layouts[l.tensor()] = l.layout();
  out.clear_layouts();
  for (const auto& [tensor, layout] : layouts) {
    auto* l = out.add_layouts();
    l->set_tensor(tensor);
    l->set_layout(layout);
  }
  std::map<std::string, int64_t> dims;
  for (const auto& d : key.shape()) dims[d.name()] = d.size();
  if (out.op() == "gemm" && dims.contains("batch") && dims["batch"] == 1) dims.erase("batch");
  out.clear_shape();
  for (const auto& [name, size] : dims) {
    auto* d = out.add_shape();
    d->set_name(name);
    d->set_size(size);
  }
  for (auto& op : *out.mutable_chain()) {
    if (op.op() != "scale") op.set_scalar(0);
    if (op.op() != "cast" && op.dtype() == v1::DTYPE_UNSPECIFIED) {
      op.set_dtype(out.output_dtype());
    }
  }
  // A prologue works on the input, so its tensors default to the input type.
  for (auto& op : *out.mutable_prologue()) {
    if (op.op() != "scale") op.set_scalar(0);
    if (op.dtype() == v1::DTYPE_UNSPECIFIED) op.set_dtype(out.input_dtype());
  }
  return out;
}

std::string CanonicalKeyString(const v1::KernelKey& key) {
  if (IsGraphKey(key)) {
    throw std::invalid_argument("an op graph key has no canonical string: plan it into kernels");
  }
  const v1::KernelKey k = NormalizeKernelKey(key);
  const auto ops_text = [](const google::protobuf::RepeatedPtrField<v1::ChainOp>& ops) {
    std::string text;
    for (int i = 0; i < ops.size(); ++i) {
      if (i) text += ",";
      text += ops[i].op() + ":" + std::string(DTypeName(ops[i].dtype()));
    }
    return text;
  };
  std::string s = k.op();
  // Only keys with a prologue spell it, so the strings of older keys (and
  // their database records) stay as they were.
  if (k.prologue_size() > 0) s += "|prologue=" + ops_text(k.prologue());
  // Likewise the second output, spelled only when written.
  if (k.write_prologue_output()) s += "|prologue_out";
  s += "|chain=" + ops_text(k.chain());
  s += "|in=" + std::string(DTypeName(k.input_dtype()));
  s += "|out=" + std::string(DTypeName(k.output_dtype()));
  s += "|acc=" + std::string(DTypeName(k.accumulate_dtype()));
  s += "|layout=";
  for (int i = 0; i < k.layouts_size(); ++i) {
    if (i) s += ",";
    s += k.layouts(i).tensor() + ":" + std::string(LayoutName(k.layouts(i).layout()));
  }
  s += "|shape=";
  for (int i = 0; i < k.shape_size(); ++i) {
    if (i) s += ",";
    s += k.shape(i).name() + "=" + std::to_string(k.shape(i).size());
  }
  // Only when set: keys stored before the field existed keep their strings.
  if (k.allow_tf32()) s += "|tf32";
  return s;
}

int64_t ProblemFlops(const v1::KernelKey& key) {
  if (key.op() == "gemm") {
    return 2 * DimSize(key, "m").value_or(0) * DimSize(key, "n").value_or(0) *
           DimSize(key, "k").value_or(0) * DimSize(key, "batch").value_or(1);
  }
  const int64_t per_element =
      key.op() == "elementwise" ? key.chain_size() + key.prologue_size() : 5;
  return per_element * DimSize(key, "rows").value_or(0) * DimSize(key, "cols").value_or(0);
}

int64_t ProblemBytes(const v1::KernelKey& key) {
  const v1::KernelKey k = NormalizeKernelKey(key);
  const auto size = [](v1::DType dtype) -> int64_t {
    switch (dtype) {
      case v1::DTYPE_F16:
      case v1::DTYPE_BF16: return 2;
      case v1::DTYPE_F64: return 8;
      default: return 4;
    }
  };
  const bool gemm = k.op() == "gemm";
  const int64_t batch = gemm ? DimSize(k, "batch").value_or(1) : 1;
  const int64_t rows = DimSize(k, gemm ? "m" : "rows").value_or(0);
  const int64_t cols = DimSize(k, gemm ? "n" : "cols").value_or(0);
  const int64_t outputs = batch * rows * cols;
  int64_t bytes = outputs * size(k.output_dtype());
  if (gemm) {
    const int64_t depth = DimSize(k, "k").value_or(0);
    bytes += batch * (rows * depth + depth * cols) * size(k.input_dtype());
  } else {
    bytes += outputs * size(k.input_dtype());
    const int64_t per_column = k.op() == "rmsnorm" ? 1 : k.op() == "layernorm" ? 2 : 0;
    bytes += per_column * cols * size(k.input_dtype());
    if (k.write_prologue_output()) bytes += outputs * size(k.input_dtype());
  }
  for (const auto& op : ChainArgumentOps(k)) {
    if (op.op() == "bias") bytes += cols * size(op.dtype());
    if (op.op() == "residual_add") bytes += outputs * size(op.dtype());
  }
  return bytes;
}

bool IsColMajor(const v1::KernelKey& key, std::string_view tensor) {
  for (const auto& l : key.layouts()) {
    if (l.tensor() == tensor) return l.layout() == v1::LAYOUT_COL_MAJOR;
  }
  return false;
}

}  // namespace tiletune::kernels
