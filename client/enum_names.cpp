#include "client/enum_names.h"

#include <cctype>

namespace tiletune::client {
namespace {

std::optional<std::string> Shorten(const EnumNaming& naming, std::string_view full) {
  if (!full.starts_with(naming.prefix) || !full.ends_with(naming.suffix)) return std::nullopt;
  full.remove_prefix(naming.prefix.size());
  full.remove_suffix(naming.suffix.size());
  if (full.empty() || full == "UNSPECIFIED") return std::nullopt;
  std::string name(full);
  for (char& c : name) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return name;
}

}  // namespace

std::string ShortEnumName(const EnumNaming& naming, int value) {
  if (value == 0) return "unspecified";
  const auto* v = naming.descriptor->FindValueByNumber(value);
  if (v == nullptr) return "?";
  return Shorten(naming, v->name()).value_or(v->name());
}

std::optional<int> ParseShortEnumName(const EnumNaming& naming, std::string_view name) {
  for (int i = 0; i < naming.descriptor->value_count(); ++i) {
    const auto* v = naming.descriptor->value(i);
    if (Shorten(naming, v->name()) == name) return v->number();
  }
  return std::nullopt;
}

std::vector<std::string> ShortEnumNames(const EnumNaming& naming) {
  std::vector<std::string> names;
  for (int i = 0; i < naming.descriptor->value_count(); ++i) {
    if (auto name = Shorten(naming, naming.descriptor->value(i)->name())) names.push_back(*name);
  }
  return names;
}

std::string ShortEnumNameList(const EnumNaming& naming) {
  std::string list;
  for (const auto& name : ShortEnumNames(naming)) list += (list.empty() ? "" : ", ") + name;
  return list;
}

}  // namespace tiletune::client
