# tiletune_embed_text(<target> <namespace> <symbol> <file>...)
# Turns text files (kernel headers and templates) into a generated .cpp that
# defines `std::string_view <namespace>::<symbol>(std::string_view name)` and
# `const std::vector<std::string_view>& <namespace>::<symbol>Names()` (the
# files' paths relative to the calling folder) so that sources handed to the
# run-time compilers live inside the binary.
function(tiletune_embed_text target namespace symbol)
  set(out "${CMAKE_CURRENT_BINARY_DIR}/${symbol}_embedded.cpp")
  set(inputs ${ARGN})
  # A CMake list would split into separate command arguments; pass one string.
  string(REPLACE ";" "|" joined_inputs "${inputs}")
  add_custom_command(
    OUTPUT "${out}"
    COMMAND ${CMAKE_COMMAND} -DOUT=${out} -DNAMESPACE=${namespace} -DSYMBOL=${symbol}
            "-DINPUTS=${joined_inputs}" -DBASE=${CMAKE_CURRENT_SOURCE_DIR}
            -P "${PROJECT_SOURCE_DIR}/cmake/EmbedTextGenerate.cmake"
    DEPENDS ${inputs} "${PROJECT_SOURCE_DIR}/cmake/EmbedTextGenerate.cmake"
    WORKING_DIRECTORY ${CMAKE_CURRENT_SOURCE_DIR}
    COMMENT "Embedding ${symbol}"
    VERBATIM)
  target_sources(${target} PRIVATE "${out}")
endfunction()
