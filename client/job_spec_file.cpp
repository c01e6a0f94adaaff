#include "client/job_spec_file.h"

#include <cerrno>
#include <cstring>
#include <fstream>
#include <initializer_list>
#include <limits>
#include <optional>
#include <set>
#include <sstream>
#include <vector>

#include <google/protobuf/util/json_util.h>
#include <yaml-cpp/yaml.h>

#include "client/input_error.h"
#include "client/key_text.h"

namespace tiletune::client {
namespace {

std::string Child(const std::string& path, std::string_view key) {
  return path.empty() ? std::string(key) : path + "." + std::string(key);
}

std::string Index(const std::string& path, size_t i) {
  return path + "[" + std::to_string(i) + "]";
}

struct Entry {
  std::string name;
  YAML::Node key;
  YAML::Node value;
};

// Walks the YAML tree, turning every problem into one InputError naming the
// source, the field path and the line.
class SpecReader {
 public:
  explicit SpecReader(std::string source) : source_(std::move(source)) {}

  [[noreturn]] void Fail(const YAML::Node& at, const std::string& path,
                         const std::string& message) const {
    std::string text = source_ + ": " + (path.empty() ? "" : path + ": ") + message;
    // yaml-cpp gives no mark (line -1) for nodes it made up.
    if (at.IsDefined() && at.Mark().line >= 0) {
      text += " (line " + std::to_string(at.Mark().line + 1) + ")";
    }
    throw InputError(text);
  }

  // The entries of the mapping `node` in file order; `expected` says what
  // the mapping should hold when it is something else.
  std::vector<Entry> Entries(const YAML::Node& node, const std::string& path,
                             const std::string& expected) const {
    if (!node.IsMap()) Fail(node, path, "expected " + expected);
    std::vector<Entry> entries;
    std::set<std::string> seen;
    for (const auto& pair : node) {
      if (!pair.first.IsScalar()) Fail(pair.first, path, "keys must be plain names");
      const std::string& name = pair.first.Scalar();
      if (!seen.insert(name).second) Fail(pair.first, Child(path, name), "is given twice");
      entries.push_back({name, pair.first, pair.second});
    }
    return entries;
  }

  // Checks that `node` is a mapping whose keys are all in `known`, once each.
  void ExpectKeys(const YAML::Node& node, const std::string& path,
                  std::initializer_list<std::string_view> known) const {
    std::string list;
    for (auto k : known) list += (list.empty() ? "" : ", ") + std::string(k);
    for (const auto& entry : Entries(node, path, "a mapping")) {
      bool is_known = false;
      for (auto k : known) is_known = is_known || k == entry.name;
      if (!is_known) Fail(entry.key, Child(path, entry.name), "unknown key (known: " + list + ")");
    }
  }

  std::string Text(const YAML::Node& node, const std::string& path) const {
    if (!node.IsScalar()) Fail(node, path, "expected a string");
    return node.Scalar();
  }

  int64_t Integer(const YAML::Node& node, const std::string& path, int64_t min, int64_t max) const {
    if (!node.IsScalar()) Fail(node, path, "expected an integer");
    auto value = Quoted(node) ? std::nullopt : ParseInteger(node.Scalar());
    if (!value) Fail(node, path, "expected an integer, got '" + node.Scalar() + "'");
    if (*value < min || *value > max) {
      Fail(node, path,
           node.Scalar() + " is out of range [" + std::to_string(min) + ", " + std::to_string(max) +
               "]");
    }
    return *value;
  }

  bool Boolean(const YAML::Node& node, const std::string& path) const {
    if (node.IsScalar() && !Quoted(node)) {
      if (node.Scalar() == "true") return true;
      if (node.Scalar() == "false") return false;
    }
    Fail(node, path, "expected true or false");
  }

  double Number(const YAML::Node& node, const std::string& path) const {
    if (!node.IsScalar()) Fail(node, path, "expected a number");
    auto value = Quoted(node) ? std::nullopt : ParseNumber(node.Scalar());
    if (!value) Fail(node, path, "expected a number, got '" + node.Scalar() + "'");
    return *value;
  }

  v1::DType DType(const YAML::Node& node, const std::string& path) const {
    std::string name = Text(node, path);
    auto dtype = ParseDTypeName(name);
    if (!dtype) {
      Fail(node, path,
           "unknown dtype '" + name + "' (known: " + ShortEnumNameList(kDTypeNaming) + ")");
    }
    return *dtype;
  }

  v1::JobSpec Spec(const YAML::Node& root) const {
    if (!root.IsDefined() || root.IsNull()) Fail(root, "", "the file is empty");
    ExpectKeys(
        root, "",
        {"name", "strategy", "priority", "device", "device_class", "seed", "budget", "kernels"});
    v1::JobSpec spec;
    if (auto n = root["name"]) spec.set_name(Text(n, "name"));
    if (auto n = root["strategy"]) spec.set_strategy(Strategy(n, "strategy"));
    if (auto n = root["priority"]) spec.set_priority(Int32(n, "priority"));
    if (auto n = root["device"]) spec.mutable_device()->set_device(Text(n, "device"));
    if (auto n = root["device_class"]) {
      spec.mutable_device()->set_device_class(Text(n, "device_class"));
    }
    if (auto n = root["seed"]) {
      spec.set_seed(
          static_cast<uint64_t>(Integer(n, "seed", 0, std::numeric_limits<int64_t>::max())));
    }
    if (auto n = root["budget"]) *spec.mutable_budget() = Budget(n, "budget");
    auto kernels = root["kernels"];
    if (!kernels) Fail(root, "kernels", "is required (a list of at least one kernel)");
    if (!kernels.IsSequence() || kernels.size() == 0) {
      Fail(kernels, "kernels", "expected a list of at least one kernel");
    }
    for (size_t i = 0; i < kernels.size(); ++i) {
      *spec.add_kernels() = Kernel(kernels[i], Index("kernels", i));
    }
    return spec;
  }

 private:
  // A quoted scalar ("128") is text in YAML and JSON, not a number.
  static bool Quoted(const YAML::Node& node) { return node.Tag() == "!"; }

  int32_t Int32(const YAML::Node& node, const std::string& path) const {
    return static_cast<int32_t>(Integer(node, path, std::numeric_limits<int32_t>::min(),
                                        std::numeric_limits<int32_t>::max()));
  }

  v1::Strategy Strategy(const YAML::Node& node, const std::string& path) const {
    std::string name = Text(node, path);
    auto value = ParseShortEnumName(kStrategyNaming, name);
    if (!value) {
      Fail(node, path,
           "unknown strategy '" + name + "' (known: " + ShortEnumNameList(kStrategyNaming) + ")");
    }
    return static_cast<v1::Strategy>(*value);
  }

  v1::SearchBudget Budget(const YAML::Node& node, const std::string& path) const {
    ExpectKeys(node, path, {"max_variants", "max_seconds"});
    v1::SearchBudget budget;
    if (auto n = node["max_variants"]) {
      budget.set_max_variants(static_cast<int32_t>(
          Integer(n, Child(path, "max_variants"), 0, std::numeric_limits<int32_t>::max())));
    }
    if (auto n = node["max_seconds"]) {
      double seconds = Number(n, Child(path, "max_seconds"));
      if (seconds < 0) Fail(n, Child(path, "max_seconds"), "must not be negative");
      budget.set_max_seconds(seconds);
    }
    return budget;
  }

  // One kernel key: op + chain (+ prologue), or an op graph.
 public:
  v1::KernelKey Kernel(const YAML::Node& node, const std::string& path) const {
    ExpectKeys(node, path,
               {"op", "dtype", "input_dtype", "output_dtype", "accumulate_dtype", "allow_tf32",
                "layouts", "shape", "chain", "prologue", "write_prologue_output", "attention_mask",
                "sequence_layout", "write_lse", "gate", "ops", "tensors", "outputs"});
    v1::KernelKey key;
    auto op = node["op"];
    if (!op && !node["ops"]) Fail(node, Child(path, "op"), "is required (or an op graph in ops)");
    if (op) key.set_op(Text(op, Child(path, "op")));
    if (node["dtype"] && node["input_dtype"]) {
      Fail(node["input_dtype"], Child(path, "input_dtype"),
           "give dtype or input_dtype, not both (dtype is its shorthand)");
    }
    for (std::string_view field : {"dtype", "input_dtype"}) {
      if (auto n = node[std::string(field)]) key.set_input_dtype(DType(n, Child(path, field)));
    }
    if (auto n = node["output_dtype"]) {
      key.set_output_dtype(DType(n, Child(path, "output_dtype")));
    }
    if (auto n = node["accumulate_dtype"]) {
      key.set_accumulate_dtype(DType(n, Child(path, "accumulate_dtype")));
    }
    if (auto n = node["allow_tf32"]) key.set_allow_tf32(Boolean(n, Child(path, "allow_tf32")));
    if (auto n = node["layouts"]) Layouts(n, Child(path, "layouts"), key);
    if (auto n = node["shape"]) Shape(n, Child(path, "shape"), key);
    if (auto n = node["chain"]) Chain(n, Child(path, "chain"), *key.mutable_chain());
    if (auto n = node["prologue"]) Chain(n, Child(path, "prologue"), *key.mutable_prologue());
    if (auto n = node["write_prologue_output"]) {
      key.set_write_prologue_output(Boolean(n, Child(path, "write_prologue_output")));
    }
    if (auto n = node["attention_mask"]) {
      key.set_attention_mask(static_cast<v1::AttentionMask>(
          Named(n, Child(path, "attention_mask"), kAttentionMaskNaming, "attention mask")));
    }
    if (auto n = node["sequence_layout"]) {
      key.set_sequence_layout(static_cast<v1::SequenceLayout>(
          Named(n, Child(path, "sequence_layout"), kSequenceLayoutNaming, "sequence layout")));
    }
    if (auto n = node["write_lse"]) key.set_write_lse(Boolean(n, Child(path, "write_lse")));
    if (auto n = node["gate"]) {
      key.set_gate(static_cast<v1::Gate>(Named(n, Child(path, "gate"), kGateNaming, "gate")));
    }
    if (auto n = node["tensors"]) Tensors(n, Child(path, "tensors"), key);
    if (auto n = node["ops"]) Ops(n, Child(path, "ops"), key);
    if (auto n = node["outputs"]) {
      for (auto& name : Names(n, Child(path, "outputs"))) key.add_outputs(name);
    }
    return key;
  }

 private:
  std::vector<std::string> Names(const YAML::Node& node, const std::string& path) const {
    if (!node.IsSequence()) Fail(node, path, "expected a list of tensor names");
    std::vector<std::string> names;
    for (size_t i = 0; i < node.size(); ++i) names.push_back(Text(node[i], Index(path, i)));
    return names;
  }

  // tensors: {x: {dims: [t, d], dtype: bf16}, w: {dims: [d], dtype: bf16}}
  void Tensors(const YAML::Node& node, const std::string& path, v1::KernelKey& key) const {
    for (const auto& entry :
         Entries(node, path, "a mapping of tensor name to {dims: [...], dtype: ...}")) {
      const std::string field = Child(path, entry.name);
      ExpectKeys(entry.value, field, {"dims", "dtype"});
      auto* tensor = key.add_tensors();
      tensor->set_name(entry.name);
      if (!entry.value["dims"]) Fail(entry.value, Child(field, "dims"), "is required");
      for (auto& dim : Names(entry.value["dims"], Child(field, "dims"))) tensor->add_dims(dim);
      if (!entry.value["dtype"]) Fail(entry.value, Child(field, "dtype"), "is required");
      tensor->set_dtype(DType(entry.value["dtype"], Child(field, "dtype")));
    }
  }

  // ops: [{op: add, inputs: [x, residual], output: h}, ...]
  void Ops(const YAML::Node& node, const std::string& path, v1::KernelKey& key) const {
    if (!node.IsSequence()) Fail(node, path, "expected a list of ops");
    for (size_t i = 0; i < node.size(); ++i) {
      const std::string field = Index(path, i);
      ExpectKeys(node[i], field, {"op", "inputs", "output", "scalar", "dtype"});
      auto* op = key.add_ops();
      if (!node[i]["op"]) Fail(node[i], Child(field, "op"), "is required");
      op->set_op(Text(node[i]["op"], Child(field, "op")));
      if (auto n = node[i]["inputs"]) {
        for (auto& name : Names(n, Child(field, "inputs"))) op->add_inputs(name);
      }
      if (auto n = node[i]["output"]) op->set_output(Text(n, Child(field, "output")));
      if (auto n = node[i]["scalar"]) op->set_scalar(Number(n, Child(field, "scalar")));
      if (auto n = node[i]["dtype"]) op->set_dtype(DType(n, Child(field, "dtype")));
    }
  }

  // An enum value by its short name ("causal", "bhsd").
  int Named(const YAML::Node& node, const std::string& path, const EnumNaming& naming,
            const std::string& what) const {
    std::string name = Text(node, path);
    auto value = ParseShortEnumName(naming, name);
    if (!value) {
      Fail(node, path,
           "unknown " + what + " '" + name + "' (known: " + ShortEnumNameList(naming) + ")");
    }
    return *value;
  }

  void Layouts(const YAML::Node& node, const std::string& path, v1::KernelKey& key) const {
    for (const auto& entry : Entries(node, path, "a mapping of tensor to layout, e.g. {a: row}")) {
      std::string field = Child(path, entry.name);
      std::string name = Text(entry.value, field);
      auto layout = ParseLayoutName(name);
      if (!layout) {
        Fail(entry.value, field,
             "unknown layout '" + name + "' (known: " + ShortEnumNameList(kLayoutNaming) + ")");
      }
      auto* layout_entry = key.add_layouts();
      layout_entry->set_tensor(entry.name);
      layout_entry->set_layout(*layout);
    }
  }

  void Shape(const YAML::Node& node, const std::string& path, v1::KernelKey& key) const {
    for (const auto& entry : Entries(node, path, "a mapping of dim to size, e.g. {m: 128}")) {
      auto* dim = key.add_shape();
      dim->set_name(entry.name);
      dim->set_size(Integer(entry.value, Child(path, entry.name),
                            std::numeric_limits<int64_t>::min(),
                            std::numeric_limits<int64_t>::max()));
    }
  }

  void Chain(const YAML::Node& node, const std::string& path,
             google::protobuf::RepeatedPtrField<v1::ChainOp>& ops) const {
    if (!node.IsSequence()) Fail(node, path, "expected a list of ops");
    for (size_t i = 0; i < node.size(); ++i) *ops.Add() = ChainEntry(node[i], Index(path, i));
  }

  v1::ChainOp ChainEntry(const YAML::Node& node, const std::string& path) const {
    if (node.IsScalar()) {
      try {
        return ParseChainEntry(node.Scalar());
      } catch (const InputError& e) {
        Fail(node, path, e.what());
      }
    }
    if (!node.IsMap())
      Fail(node, path, "expected an op name or {op: ..., scalar: ..., dtype: ...}");
    ExpectKeys(node, path, {"op", "scalar", "dtype"});
    auto op = node["op"];
    if (!op) Fail(node, Child(path, "op"), "is required");
    v1::ChainOp entry;
    entry.set_op(Text(op, Child(path, "op")));
    try {
      CheckOpNameSyntax(entry.op());
    } catch (const InputError& e) {
      Fail(op, Child(path, "op"), e.what());
    }
    if (auto n = node["scalar"]) entry.set_scalar(Number(n, Child(path, "scalar")));
    if (auto n = node["dtype"]) entry.set_dtype(DType(n, Child(path, "dtype")));
    return entry;
  }

  std::string source_;
};

YAML::Node LoadYaml(std::string_view text, const std::string& source) {
  try {
    return YAML::Load(std::string(text));
  } catch (const YAML::ParserException& e) {
    throw InputError(source + ": YAML syntax error: " + e.msg + " (line " +
                     std::to_string(e.mark.line + 1) + ")");
  }
}

std::string ReadText(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw InputError(path.string() + ": cannot read: " + std::strerror(errno));
  std::ostringstream text;
  text << in.rdbuf();
  if (in.bad()) throw InputError(path.string() + ": cannot read: " + std::strerror(errno));
  return text.str();
}

// A JobSpec in the API's JSON form, with at least one kernel; nullopt
// otherwise, and the documented format's reader then explains what is wrong
// (its messages name the line, which the API form's parser cannot). Where
// both forms read a file, they agree: their common keys are the proto's
// field names.
std::optional<v1::JobSpec> ApiJsonSpec(std::string_view text) {
  const size_t start = text.find_first_not_of(" \t\r\n");
  if (start == std::string_view::npos || text[start] != '{') return std::nullopt;
  v1::JobSpec spec;
  if (!google::protobuf::util::JsonStringToMessage(text, &spec).ok()) return std::nullopt;
  if (spec.kernels_size() == 0) return std::nullopt;
  return spec;
}

}  // namespace

v1::JobSpec ParseJobSpec(std::string_view text, const std::string& source) {
  if (auto spec = ApiJsonSpec(text)) return *spec;
  return SpecReader(source).Spec(LoadYaml(text, source));
}

v1::JobSpec ReadJobSpecFile(const std::filesystem::path& path) {
  return ParseJobSpec(ReadText(path), path.string());
}

v1::KernelKey ParseKernelKeyText(std::string_view text, const std::string& source) {
  const YAML::Node root = LoadYaml(text, source);
  if (!root.IsDefined() || root.IsNull()) throw InputError(source + ": the file is empty");
  return SpecReader(source).Kernel(root, "");
}

v1::KernelKey ReadKernelKeyFile(const std::filesystem::path& path) {
  return ParseKernelKeyText(ReadText(path), path.string());
}

}  // namespace tiletune::client
