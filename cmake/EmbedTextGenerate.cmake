# Script mode helper of EmbedText.cmake: writes one lookup function over the
# given files, keyed by their path relative to BASE, and one listing those
# paths in the order given.
string(REPLACE "|" ";" INPUTS "${INPUTS}")
set(body "#include <string_view>\n#include <vector>\nnamespace ${NAMESPACE} {\nstd::string_view ${SYMBOL}(std::string_view name) {\n")
set(names "")
foreach(input IN LISTS INPUTS)
  file(READ "${input}" text)
  file(RELATIVE_PATH rel "${BASE}" "${input}")
  string(APPEND body "  if (name == \"${rel}\") {\n    static constexpr char kText[] = R\"tiletune_embed(${text})tiletune_embed\";\n    return {kText, sizeof(kText) - 1};\n  }\n")
  string(APPEND names "\"${rel}\", ")
endforeach()
string(APPEND body "  return {};\n}\n")
string(APPEND body "const std::vector<std::string_view>& ${SYMBOL}Names() {\n  static const std::vector<std::string_view> kNames = {${names}};\n  return kNames;\n}\n")
string(APPEND body "}  // namespace ${NAMESPACE}\n")
file(WRITE "${OUT}.tmp" "${body}")
file(COPY_FILE "${OUT}.tmp" "${OUT}" ONLY_IF_DIFFERENT)
