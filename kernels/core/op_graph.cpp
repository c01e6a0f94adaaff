#include "kernels/core/op_graph.h"

#include <algorithm>
#include <map>
#include <set>

#include "kernels/core/op_registry.h"

namespace tiletune::kernels::fusion {
namespace {

struct TensorShape {
  std::vector<int64_t> dims;  // sizes, outermost first
  v1::DType dtype = v1::DTYPE_UNSPECIFIED;
};

struct OpRule {
  OpKind kind;
  int inputs;
};

const std::map<std::string, OpRule, std::less<>>& OpRules() {
  static const std::map<std::string, OpRule, std::less<>> kRules = [] {
    std::map<std::string, OpRule, std::less<>> rules = {
        {"matmul", {OpKind::kMatmul, 2}},           {"matmul_t", {OpKind::kMatmul, 2}},
        {"causal_mask", {OpKind::kElementwise, 1}}, {"add", {OpKind::kElementwise, 2}},
        {"scale", {OpKind::kElementwise, 1}},       {"relu", {OpKind::kElementwise, 1}},
        {"gelu_tanh", {OpKind::kElementwise, 1}},   {"gelu_erf", {OpKind::kElementwise, 1}},
        {"silu", {OpKind::kElementwise, 1}},        {"cast", {OpKind::kElementwise, 1}},
        {"swiglu", {OpKind::kElementwise, 1}},
    };
    // A row op of the registry is a graph op of the same name, reading its
    // input and then its per-column tensors.
    for (const OpSpec* spec : AllOpSpecs()) {
      if (spec->fusion != FusionKind::kRowReduction) continue;
      const auto inputs =
          std::count_if(spec->tensors.begin(), spec->tensors.end(),
                        [](const TensorArg& t) { return t.role != TensorRole::kOutput; });
      rules[std::string(spec->name)] = {OpKind::kRowReduction, static_cast<int>(inputs)};
    }
    return rules;
  }();
  return kRules;
}

bool IsTensorDType(v1::DType d) {
  return d == v1::DTYPE_F32 || d == v1::DTYPE_F16 || d == v1::DTYPE_BF16;
}

std::string ShapeText(const std::vector<int64_t>& dims) {
  std::string s = "[";
  for (size_t i = 0; i < dims.size(); ++i) s += (i ? ", " : "") + std::to_string(dims[i]);
  return s + "]";
}

class GraphResolver {
 public:
  GraphResolver(const v1::KernelKey& key, const KeyLimits& limits, const std::string& prefix)
      : key_(key), limits_(limits), prefix_(prefix) {}

  std::variant<ResolvedGraph, FieldError> Resolve() {
    if (auto e = DeclareTensors()) return *e;
    if (key_.ops_size() > limits_.max_graph_ops) {
      return FieldError{prefix_ + ".ops", "has " + std::to_string(key_.ops_size()) +
                                              " ops; the limit is max_graph_ops " +
                                              std::to_string(limits_.max_graph_ops)};
    }
    ResolvedGraph graph;
    for (int i = 0; i < key_.ops_size(); ++i) {
      auto op = ResolveOp(i, graph);
      if (auto* e = std::get_if<FieldError>(&op)) return *e;
      graph.ops.push_back(std::get<ResolvedOp>(std::move(op)));
    }
    if (auto e = MarkOutputs(graph)) return *e;
    return graph;
  }

 private:
  std::string OpPath(int i) const { return prefix_ + ".ops[" + std::to_string(i) + "]"; }

  std::optional<FieldError> DeclareTensors() {
    if (key_.tensors_size() > limits_.max_graph_tensors) {
      return FieldError{prefix_ + ".tensors", "has " + std::to_string(key_.tensors_size()) +
                                                  " tensors; the limit is max_graph_tensors " +
                                                  std::to_string(limits_.max_graph_tensors)};
    }
    std::map<std::string, int64_t> sizes;
    for (const auto& d : key_.shape()) sizes[d.name()] = d.size();
    for (int i = 0; i < key_.tensors_size(); ++i) {
      const auto& t = key_.tensors(i);
      const std::string path = prefix_ + ".tensors[" + std::to_string(i) + "]";
      if (t.name().empty()) return FieldError{path + ".name", "is required"};
      if (tensors_.contains(t.name())) {
        return FieldError{path + ".name", "tensor " + Quoted(t.name()) + " is declared twice"};
      }
      if (t.dims_size() < 1 || t.dims_size() > 2) {
        return FieldError{path + ".dims", Quoted(t.name()) + " must have 1 or 2 dimensions, has " +
                                              std::to_string(t.dims_size())};
      }
      TensorShape shape;
      long double elements = 1;
      for (int j = 0; j < t.dims_size(); ++j) {
        const auto it = sizes.find(t.dims(j));
        if (it == sizes.end()) {
          return FieldError{path + ".dims[" + std::to_string(j) + "]",
                            "dimension " + Quoted(t.dims(j)) + " has no size in shape"};
        }
        shape.dims.push_back(it->second);
        elements *= static_cast<long double>(it->second);
      }
      if (elements > static_cast<long double>(limits_.max_elements)) {
        return FieldError{path + ".dims", Quoted(t.name()) + " has more than max_elements " +
                                              std::to_string(limits_.max_elements) + " elements"};
      }
      if (!IsTensorDType(t.dtype())) {
        return FieldError{path + ".dtype", Quoted(t.name()) + " needs a dtype (f32, f16, bf16)"};
      }
      shape.dtype = t.dtype();
      tensors_[t.name()] = shape;
    }
    return std::nullopt;
  }

  // A declared graph input read as an op's extra operand.
  std::variant<TensorShape, FieldError> Operand(int op, int input) const {
    const std::string& name = key_.ops(op).inputs(input);
    const std::string path = OpPath(op) + ".inputs[" + std::to_string(input) + "]";
    if (op_outputs_.contains(name)) {
      return FieldError{path, Quoted(name) +
                                  " is an op's output; graphs are chains, so only inputs[0] "
                                  "reads the previous op's output"};
    }
    const auto it = tensors_.find(name);
    if (it == tensors_.end()) {
      return FieldError{path, "tensor " + Quoted(name) + " is not declared in tensors"};
    }
    return it->second;
  }

  std::variant<ResolvedOp, FieldError> ResolveOp(int i, const ResolvedGraph& graph) {
    const v1::OpNode& node = key_.ops(i);
    const std::string path = OpPath(i);
    const auto rule = OpRules().find(node.op());
    if (rule == OpRules().end()) {
      return FieldError{path + ".op", "unknown op " + Quoted(node.op()) +
                                          " (known: matmul, matmul_t, add, scale, "
                                          "causal_mask, relu, gelu_tanh, gelu_erf, silu, cast, "
                                          "swiglu, " +
                                          OpNames(FusionKind::kRowReduction) + ")"};
    }
    if (node.inputs_size() != rule->second.inputs) {
      return FieldError{path + ".inputs",
                        node.op() + " takes " + std::to_string(rule->second.inputs) +
                            " input(s), got " + std::to_string(node.inputs_size())};
    }
    if (node.output().empty()) return FieldError{path + ".output", "is required"};
    if (tensors_.contains(node.output()) || op_outputs_.contains(node.output())) {
      return FieldError{path + ".output",
                        "tensor " + Quoted(node.output()) + " is already defined"};
    }

    // The flowing tensor: a declared input for the first op, then the
    // previous op's output.
    TensorShape flowing;
    if (i == 0) {
      const auto it = tensors_.find(node.inputs(0));
      if (it == tensors_.end()) {
        return FieldError{path + ".inputs[0]",
                          "tensor " + Quoted(node.inputs(0)) + " is not declared in tensors"};
      }
      flowing = it->second;
      if (flowing.dims.size() != 2) {
        return FieldError{path + ".inputs[0]",
                          Quoted(node.inputs(0)) + " must be 2-D, is " + ShapeText(flowing.dims)};
      }
    } else {
      const ResolvedOp& previous = graph.ops.back();
      if (node.inputs(0) != previous.output) {
        return FieldError{path + ".inputs[0]",
                          "must be the previous op's output " + Quoted(previous.output) +
                              " (graphs are chains), got " + Quoted(node.inputs(0))};
      }
      flowing = {{previous.rows, previous.cols}, previous.output_dtype};
    }

    ResolvedOp op;
    op.index = i;
    op.kind = rule->second.kind;
    op.op = node.op();
    op.rows = flowing.dims[0];
    op.cols = flowing.dims[1];
    op.input_dtype = op.output_dtype = flowing.dtype;
    op.scalar = node.scalar();
    op.output = node.output();

    if (op.op == "matmul" || op.op == "matmul_t") {
      // matmul_t multiplies by the transpose of B, stored [N, K].
      op.b_transposed = op.op == "matmul_t";
      const int k_dim = op.b_transposed ? 1 : 0;
      auto b = Operand(i, 1);
      if (auto* e = std::get_if<FieldError>(&b)) return *e;
      const auto& bs = std::get<TensorShape>(b);
      if (bs.dims.size() != 2 || bs.dims[k_dim] != op.cols) {
        const std::string k = std::to_string(op.cols);
        return FieldError{path + ".inputs[1]",
                          op.op + " of " + ShapeText(flowing.dims) + " needs B shaped " +
                              (op.b_transposed ? "[N, " + k + "]" : "[" + k + ", N]") + ", got " +
                              ShapeText(bs.dims)};
      }
      if (bs.dtype != flowing.dtype) {
        return FieldError{path + ".inputs[1]", "matmul operands must share a dtype: A is " +
                                                   std::string(DTypeName(flowing.dtype)) +
                                                   ", B is " + std::string(DTypeName(bs.dtype))};
      }
      op.k = op.cols;
      op.cols = bs.dims[1 - k_dim];
    } else if (op.op == "add") {
      auto other = Operand(i, 1);
      if (auto* e = std::get_if<FieldError>(&other)) return *e;
      const auto& os = std::get<TensorShape>(other);
      op.per_column = os.dims.size() == 1;
      const bool fits = op.per_column ? os.dims[0] == op.cols : os.dims == flowing.dims;
      if (!fits) {
        return FieldError{path + ".inputs[1]", "add to " + ShapeText(flowing.dims) +
                                                   " needs a tensor shaped like it or [" +
                                                   std::to_string(op.cols) +
                                                   "] (per column), got " + ShapeText(os.dims)};
      }
      op.other_dtype = os.dtype;
    } else if (op.op == "swiglu") {
      // Splits the columns in two halves: silu(first) * second.
      if (op.cols % 2 != 0) {
        return FieldError{path + ".inputs[0]", "swiglu halves the columns of " +
                                                   ShapeText(flowing.dims) +
                                                   ": their count must be even"};
      }
      op.cols /= 2;
    } else if (op.op == "cast") {
      if (!IsTensorDType(node.dtype())) {
        return FieldError{path + ".dtype", "cast needs a target dtype (f32, f16, bf16)"};
      }
      op.output_dtype = node.dtype();
    } else if (op.kind == OpKind::kRowReduction) {
      for (int j = 1; j < node.inputs_size(); ++j) {
        auto w = Operand(i, j);
        if (auto* e = std::get_if<FieldError>(&w)) return *e;
        const auto& ws = std::get<TensorShape>(w);
        const std::string input_path = path + ".inputs[" + std::to_string(j) + "]";
        if (ws.dims != std::vector<int64_t>{op.cols}) {
          return FieldError{input_path, op.op + " weights must be [" + std::to_string(op.cols) +
                                            "], got " + ShapeText(ws.dims)};
        }
        if (ws.dtype != flowing.dtype) {
          return FieldError{input_path, op.op + " weights are read in the input's dtype " +
                                            std::string(DTypeName(flowing.dtype)) + ", got " +
                                            std::string(DTypeName(ws.dtype))};
        }
      }
    }
    op_outputs_.insert(op.output);
    return op;
  }

  std::optional<FieldError> MarkOutputs(ResolvedGraph& graph) const {
    if (graph.ops.empty()) return std::nullopt;
    std::set<std::string> wanted;
    for (int i = 0; i < key_.outputs_size(); ++i) {
      const std::string path = prefix_ + ".outputs[" + std::to_string(i) + "]";
      if (!op_outputs_.contains(key_.outputs(i))) {
        return FieldError{path, Quoted(key_.outputs(i)) + " is not the output of an op"};
      }
      if (!wanted.insert(key_.outputs(i)).second) {
        return FieldError{path, Quoted(key_.outputs(i)) + " is listed twice"};
      }
    }
    if (!wanted.empty() && !wanted.contains(graph.ops.back().output)) {
      return FieldError{prefix_ + ".outputs",
                        "must list the last op's output " + Quoted(graph.ops.back().output)};
    }
    for (auto& op : graph.ops) op.output_wanted = wanted.contains(op.output);
    graph.ops.back().output_wanted = true;
    return std::nullopt;
  }

  const v1::KernelKey& key_;
  const KeyLimits& limits_;
  const std::string& prefix_;
  std::map<std::string, TensorShape> tensors_;
  std::set<std::string> op_outputs_;
};

}  // namespace

std::variant<ResolvedGraph, FieldError> ResolveOpGraph(const v1::KernelKey& key,
                                                       const KeyLimits& limits,
                                                       const std::string& prefix) {
  return GraphResolver(key, limits, prefix).Resolve();
}

std::optional<FieldError> ValidateOpGraph(const v1::KernelKey& key, const KeyLimits& limits,
                                          const std::string& prefix) {
  auto resolved = ResolveOpGraph(key, limits, prefix);
  if (auto* e = std::get_if<FieldError>(&resolved)) return *e;
  return std::nullopt;
}

}  // namespace tiletune::kernels::fusion
