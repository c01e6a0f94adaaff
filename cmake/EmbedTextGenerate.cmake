# Script mode helper of EmbedText.cmake: writes one lookup function over the
# given files, keyed by their path relative to BASE.
string(REPLACE "|" ";" INPUTS "${INPUTS}")
set(body "#include <string_view>\nnamespace ${NAMESPACE} {\nstd::string_view ${SYMBOL}(std::string_view name) {\n")
foreach(input IN LISTS INPUTS)
  file(READ "${input}" text)
  file(RELATIVE_PATH rel "${BASE}" "${input}")
  string(APPEND body "  if (name == \"${rel}\") {\n    static constexpr char kText[] = R\"tiletune_embed(${text})tiletune_embed\";\n    return {kText, sizeof(kText) - 1};\n  }\n")
endforeach()
string(APPEND body "  return {};\n}\n}  // namespace ${NAMESPACE}\n")
file(WRITE "${OUT}.tmp" "${body}")
file(COPY_FILE "${OUT}.tmp" "${OUT}" ONLY_IF_DIFFERENT)
