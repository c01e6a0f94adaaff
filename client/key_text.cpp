#include "client/key_text.h"

#include <charconv>
#include <cmath>
#include <set>

#include "client/input_error.h"

namespace tiletune::client {
namespace {

std::vector<std::string_view> SplitList(std::string_view text) {
  std::vector<std::string_view> parts;
  while (true) {
    size_t comma = text.find(',');
    parts.push_back(text.substr(0, comma));
    if (comma == std::string_view::npos) return parts;
    text.remove_prefix(comma + 1);
  }
}

struct Assignment {
  std::string_view name;
  std::string_view value;
};

// Splits the comma list `text` into NAME=VALUE parts, rejecting empty parts,
// missing '=' and repeated names.
std::vector<Assignment> ParseAssignments(std::string_view text, std::string_view flag,
                                         std::string_view what) {
  if (text.empty()) throw InputError(std::string(flag) + ": is empty");
  std::vector<Assignment> out;
  std::set<std::string_view> seen;
  for (std::string_view part : SplitList(text)) {
    size_t eq = part.find('=');
    if (eq == std::string_view::npos || eq == 0 || eq + 1 == part.size()) {
      throw InputError(std::string(flag) + ": '" + std::string(part) + "' is not " +
                       std::string(what));
    }
    Assignment a{part.substr(0, eq), part.substr(eq + 1)};
    if (!seen.insert(a.name).second) {
      throw InputError(std::string(flag) + ": '" + std::string(a.name) + "' is given twice");
    }
    out.push_back(a);
  }
  return out;
}

// `head` and then `parts` separated by commas.
std::string CommaJoined(const std::string& head, const std::vector<std::string>& parts) {
  std::string text = head;
  for (size_t i = 0; i < parts.size(); ++i) text += (i == 0 ? "" : ",") + parts[i];
  return text;
}

}  // namespace

std::optional<v1::DType> ParseDTypeName(std::string_view name) {
  auto value = ParseShortEnumName(kDTypeNaming, name);
  if (!value) return std::nullopt;
  return static_cast<v1::DType>(*value);
}

std::optional<v1::Layout> ParseLayoutName(std::string_view name) {
  auto value = ParseShortEnumName(kLayoutNaming, name);
  if (!value) return std::nullopt;
  return static_cast<v1::Layout>(*value);
}

std::optional<int64_t> ParseInteger(std::string_view text) {
  int64_t value = 0;
  const char* end = text.data() + text.size();
  auto [ptr, ec] = std::from_chars(text.data(), end, value);
  if (text.empty() || ec != std::errc() || ptr != end) return std::nullopt;
  return value;
}

std::optional<double> ParseNumber(std::string_view text) {
  double value = 0;
  const char* end = text.data() + text.size();
  auto [ptr, ec] = std::from_chars(text.data(), end, value);
  if (text.empty() || ec != std::errc() || ptr != end || !std::isfinite(value)) {
    return std::nullopt;
  }
  return value;
}

void CheckOpNameSyntax(std::string_view name) {
  bool valid = !name.empty();
  for (char c : name) {
    valid = valid && ((c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '_');
  }
  if (!valid) {
    throw InputError("'" + std::string(name) +
                     "' is not an op name (lower-case letters, digits, _)");
  }
}

v1::ChainOp ParseChainEntry(std::string_view text) {
  size_t eq = text.find('=');
  std::string_view op = text.substr(0, eq);
  CheckOpNameSyntax(op);
  v1::ChainOp entry;
  entry.set_op(std::string(op));
  if (eq == std::string_view::npos) return entry;
  std::string_view value = text.substr(eq + 1);
  if (auto dtype = ParseDTypeName(value)) {
    entry.set_dtype(*dtype);
  } else if (auto scalar = ParseNumber(value)) {
    entry.set_scalar(*scalar);
  } else {
    throw InputError("'" + std::string(text) + "': '" + std::string(value) +
                     "' is neither a number nor a dtype (" + ShortEnumNameList(kDTypeNaming) + ")");
  }
  return entry;
}

std::vector<v1::Dim> ParseShapeText(std::string_view text, std::string_view flag) {
  std::vector<v1::Dim> dims;
  for (const auto& [name, value] : ParseAssignments(text, flag, "NAME=SIZE")) {
    auto size = ParseInteger(value);
    if (!size) {
      throw InputError(std::string(flag) + ": " + std::string(name) + ": '" + std::string(value) +
                       "' is not an integer");
    }
    v1::Dim dim;
    dim.set_name(std::string(name));
    dim.set_size(*size);
    dims.push_back(std::move(dim));
  }
  return dims;
}

std::vector<v1::TensorLayout> ParseLayoutsText(std::string_view text, std::string_view flag) {
  std::vector<v1::TensorLayout> layouts;
  for (const auto& [tensor, value] : ParseAssignments(text, flag, "TENSOR=LAYOUT")) {
    auto layout = ParseLayoutName(value);
    if (!layout) {
      throw InputError(std::string(flag) + ": " + std::string(tensor) + ": unknown layout '" +
                       std::string(value) + "' (known: " + ShortEnumNameList(kLayoutNaming) + ")");
    }
    v1::TensorLayout entry;
    entry.set_tensor(std::string(tensor));
    entry.set_layout(*layout);
    layouts.push_back(std::move(entry));
  }
  return layouts;
}

std::vector<v1::ChainOp> ParseChainText(std::string_view text, std::string_view flag) {
  if (text.empty()) throw InputError(std::string(flag) + ": is empty");
  std::vector<v1::ChainOp> chain;
  for (std::string_view part : SplitList(text)) {
    try {
      chain.push_back(ParseChainEntry(part));
    } catch (const InputError& e) {
      throw InputError(std::string(flag) + ": " + e.what());
    }
  }
  return chain;
}

std::string KeyText(const v1::KernelKey& key) {
  std::string text = key.op().empty() ? "?" : key.op();
  if (key.ops_size() > 0) {
    text = "graph ";
    for (int i = 0; i < key.ops_size(); ++i) text += (i ? "->" : "") + key.ops(i).op();
  }
  if (key.input_dtype() != v1::DTYPE_UNSPECIFIED) {
    text += " " + ShortEnumName(kDTypeNaming, key.input_dtype());
  }
  if (key.output_dtype() != v1::DTYPE_UNSPECIFIED) {
    text += "->" + ShortEnumName(kDTypeNaming, key.output_dtype());
  }
  if (key.accumulate_dtype() != v1::DTYPE_UNSPECIFIED) {
    text += " acc=" + ShortEnumName(kDTypeNaming, key.accumulate_dtype());
  }
  if (key.allow_tf32()) text += " tf32";
  // Zero is a named value of these (none, bshd): shown only when set.
  if (key.attention_mask() != v1::ATTENTION_MASK_NONE) {
    text += " mask=" + ShortEnumName(kAttentionMaskNaming, key.attention_mask());
  }
  if (key.sequence_layout() != v1::SEQUENCE_LAYOUT_BSHD) {
    text += " " + ShortEnumName(kSequenceLayoutNaming, key.sequence_layout());
  }
  if (key.write_lse()) text += " lse";
  if (key.gate() != v1::GATE_NONE) text += " gate=" + ShortEnumName(kGateNaming, key.gate());
  std::vector<std::string> parts;
  for (const auto& d : key.shape()) parts.push_back(d.name() + "=" + std::to_string(d.size()));
  if (!parts.empty()) text += CommaJoined(" ", parts);
  parts.clear();
  for (const auto& l : key.layouts()) {
    parts.push_back(l.tensor() + "=" + ShortEnumName(kLayoutNaming, l.layout()));
  }
  if (!parts.empty()) text += CommaJoined(" ", parts);
  const auto chain_text = [](const google::protobuf::RepeatedPtrField<v1::ChainOp>& ops) {
    std::vector<std::string> entries;
    for (const auto& c : ops) {
      std::string entry = c.op();
      if (c.dtype() != v1::DTYPE_UNSPECIFIED) {
        entry += "=" + ShortEnumName(kDTypeNaming, c.dtype());
      } else if (c.scalar() != 0) {
        char buf[32];
        auto [end, ec] = std::to_chars(buf, buf + sizeof buf, c.scalar());
        entry += "=" + std::string(buf, ec == std::errc() ? end : buf);
      }
      entries.push_back(entry);
    }
    return entries;
  };
  if (key.prologue_size() > 0) text += CommaJoined(" prologue=", chain_text(key.prologue()));
  if (key.chain_size() > 0) text += CommaJoined(" chain=", chain_text(key.chain()));
  return text;
}

}  // namespace tiletune::client
