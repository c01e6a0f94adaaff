// tiletune-rtc: compiles one device kernel with NVRTC, hipRTC or clang (HIP
// for gfx942/gfx950) in its own process, so that the daemon can kill a
// compile that hangs; clang's process group dies with it.
//
//   tiletune-rtc COMPILER ARCH SOURCE ARTIFACT HEADER_DIR [OPTION...]
//
// Reads SOURCE and every file below HEADER_DIR (passed as in-memory headers
// by their path relative to it), writes the binary to ARTIFACT and the compiler log to stderr.
// Exit 0 on success, 1 when the compile failed, 2 on bad usage or I/O.
#include <filesystem>
#include <fstream>
#include <iostream>
#include <sstream>

#include "runtime/rtc/rtc_compiler.h"
#include "runtime/subprocess.h"

namespace fs = std::filesystem;

namespace {

std::string ReadFile(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw std::runtime_error("cannot read " + path.string());
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 6) {
    std::cerr << "usage: tiletune-rtc COMPILER ARCH SOURCE ARTIFACT HEADER_DIR [OPTION...]\n";
    return 2;
  }
  const fs::path source = argv[3], artifact = argv[4], header_dir = argv[5];
  try {
    tiletune::runtime::KillChildGroupsOnExit();
  } catch (const std::system_error& e) {
    std::cerr << "tiletune-rtc: " << e.what() << "\n";
    return 2;
  }
  std::string why;
  auto compiler = tiletune::runtime::OpenRtcCompiler(argv[1], &why);
  if (!compiler) {
    std::cerr << "tiletune-rtc: " << why << "\n";
    return 2;
  }
  try {
    std::vector<std::pair<std::string, std::string>> headers;
    // Headers are named by their path below HEADER_DIR ("tt/tile.h"), which
    // is how the kernels include them.
    for (const auto& entry : fs::recursive_directory_iterator(header_dir)) {
      if (entry.is_regular_file() && entry.path() != source) {
        headers.emplace_back(fs::relative(entry.path(), header_dir).generic_string(),
                             ReadFile(entry.path()));
      }
    }
    const std::vector<std::string> options(argv + 6, argv + argc);
    const auto out =
        compiler->Compile(ReadFile(source), source.filename().string(), headers, options, argv[2]);
    std::cerr << out.log;
    if (!out.ok) return 1;
    std::ofstream(artifact, std::ios::binary) << out.binary;
    return fs::file_size(artifact) == out.binary.size() ? 0 : 2;
  } catch (const std::exception& e) {
    std::cerr << "tiletune-rtc: " << e.what() << "\n";
    return 2;
  }
}
