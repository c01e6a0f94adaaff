// A host compiler that finds no OpenBLAS: c++ itself, but answering the host
// backend's question for libopenblas.so.0 as gcc answers for a file it does
// not find (the bare name). What a machine without libopenblas0 looks like
// to tiletuned, on one that has it.
#pragma once

#include <filesystem>
#include <fstream>

namespace tiletune::testing {

inline std::filesystem::path CompilerWithoutOpenBlas(const std::filesystem::path& dir) {
  const std::filesystem::path script = dir / "c++-without-openblas";
  std::ofstream(script) << "#!/bin/sh\n"
                           "case \"$1\" in -print-file-name=*) echo \"${1#-print-file-name=}\"; "
                           "exit 0;; esac\n"
                           "exec c++ \"$@\"\n";
  std::filesystem::permissions(script, std::filesystem::perms::owner_all);
  return script;
}

}  // namespace tiletune::testing
