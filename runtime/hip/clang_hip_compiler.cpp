#include "runtime/hip/clang_hip_compiler.h"

#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <fstream>
#include <optional>
#include <regex>
#include <sstream>
#include <system_error>

#include "runtime/content_hash.h"
#include "runtime/shared_library.h"
#include "runtime/subprocess.h"

namespace tiletune::runtime::hip {
namespace {

namespace fs = std::filesystem;

// Older clang does not know gfx950 (19) or gfx942 (16); 22 is the one this
// path was checked with.
constexpr int kMinClangMajor = 22;
constexpr auto kVersionTimeout = std::chrono::seconds(10);
// A ceiling only: the compile limit is enforced on tiletune-rtc, whose death
// takes clang with it.
constexpr auto kCompileCeiling = std::chrono::hours(1);

const std::vector<std::string> kClangCandidates = {"clang++-22", "/usr/lib/llvm-22/bin/clang++"};

// hipRTC's built-in preamble (HIP's device declarations, the text hipRTC
// puts in front of every source) as two symbols of libhiprtc-builtins.
const std::vector<std::string> kBuiltinsLibraries = {
    "libhiprtc-builtins.so.5", "libhiprtc-builtins.so", "/opt/rocm/lib/libhiprtc-builtins.so"};

// Where device libraries are looked for, first hit wins per file: the
// constants deploy/install-deps.sh generates (ROCm 5.2 has no ISA version
// for gfx942/gfx950), then Debian's rocm-device-libs, then a ROCm install.
const std::vector<fs::path> kBitcodeFolders = {"/usr/local/lib/tiletune/amdgcn/bitcode",
                                               "/usr/lib/x86_64-linux-gnu/amdgcn/bitcode",
                                               "/opt/rocm/amdgcn/bitcode"};

// The device libraries clang links, with the controls hipRTC's driver picks
// by default for wave64 targets and our options (no fast math, IEEE
// denormals, correctly rounded sqrt). hip.bc supplies the atomic fences,
// ocml/ockl the maths and work-item ids.
const std::vector<std::string> kLibraries = {"hip.bc",
                                             "ocml.bc",
                                             "ockl.bc",
                                             "oclc_daz_opt_off.bc",
                                             "oclc_unsafe_math_off.bc",
                                             "oclc_finite_only_off.bc",
                                             "oclc_correctly_rounded_sqrt_on.bc",
                                             "oclc_wavefrontsize64_on.bc",
                                             "oclc_abi_version_500.bc"};

std::string ReadFile(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream s;
  s << in.rdbuf();
  if (!in) throw std::runtime_error("cannot read " + path.string());
  return s.str();
}

void WriteFile(const fs::path& path, const std::string& text) {
  fs::create_directories(path.parent_path());
  std::ofstream out(path, std::ios::binary);
  out << text;
  if (!out.flush()) throw std::runtime_error("cannot write " + path.string());
}

std::optional<fs::path> FindBitcode(const std::string& file) {
  if (const char* folder = std::getenv("TILETUNE_AMDGCN_BITCODE"); folder && *folder) {
    if (fs::exists(fs::path(folder) / file)) return fs::path(folder) / file;
  }
  for (const auto& folder : kBitcodeFolders) {
    if (fs::exists(folder / file)) return folder / file;
  }
  return std::nullopt;
}

// "gfx942" -> "oclc_isa_version_942.bc".
std::string IsaLibrary(const std::string& arch) {
  return "oclc_isa_version_" + arch.substr(3) + ".bc";
}

// The clang that runs and its "clang version X.Y.Z" line, or why none does.
std::optional<std::pair<std::string, std::string>> FindClang(std::string* why) {
  std::vector<std::string> candidates = kClangCandidates;
  if (const char* chosen = std::getenv("TILETUNE_HIP_CLANG"); chosen && *chosen) {
    candidates = {chosen};
  }
  std::string tried;
  for (const auto& clang : candidates) {
    try {
      const CommandResult run = RunCommand({clang, "--version"}, kVersionTimeout);
      if (run.status.success()) {
        static const std::regex kVersion(R"(clang version (\d+)\.(\d+)\.(\d+))");
        std::smatch m;
        if (!std::regex_search(run.out, m, kVersion)) {
          tried += clang + ": no version in '" + run.out.substr(0, run.out.find('\n')) + "'; ";
        } else if (std::stoi(m[1]) < kMinClangMajor) {
          tried +=
              clang + " is " + m.str(0) + ", older than " + std::to_string(kMinClangMajor) + "; ";
        } else {
          return std::pair{clang, "clang " + m[1].str() + "." + m[2].str() + "." + m[3].str()};
        }
      } else {
        tried += clang + " --version: " + run.status.ToString() + "; ";
      }
    } catch (const std::system_error& e) {
      tried += clang + ": " + e.what() + "; ";
    }
  }
  *why = "no clang for HIP (>= " + std::to_string(kMinClangMajor) +
         ", Debian: clang-22 lld-22): " + tried.substr(0, tried.size() - 2);
  return std::nullopt;
}

}  // namespace

const std::vector<std::string>& ClangHipCompiler::Archs() {
  static const std::vector<std::string> archs = {"gfx942", "gfx950"};
  return archs;
}

std::unique_ptr<ClangHipCompiler> ClangHipCompiler::Open(std::string* why) {
  const auto clang = FindClang(why);
  if (!clang) return nullptr;

  // Read from the installed hipRTC at run time rather than from a copy made
  // at install time: a copy could go stale when ROCm is upgraded, this is
  // the text hipRTC itself prepends for gfx90a on the same machine.
  std::string tried;
  const auto builtins = OpenSharedLibrary(kBuiltinsLibraries, "__hipRTC_header", &tried);
  if (!builtins) {
    *why = "hipRTC's preamble not found (Debian: libhiprtc-builtins5): " + tried;
    return nullptr;
  }
  const auto* header = static_cast<const char*>(FindSymbol(*builtins, "__hipRTC_header"));
  const auto* header_size =
      static_cast<const unsigned*>(FindSymbol(*builtins, "__hipRTC_header_size"));
  if (!header_size || *header_size == 0) {
    *why = builtins->file + " lacks __hipRTC_header_size";
    return nullptr;
  }
  std::string preamble(header, *header_size);
  // hipRTC defines the HIP version it is; its file name carries it
  // ("libhiprtc-builtins.so.5.2.21153").
  static const std::regex kFileVersion(R"(\.so\.(\d+)\.(\d+)\.(\d+)$)");
  std::smatch m;
  if (!std::regex_search(builtins->file, m, kFileVersion)) {
    *why = "no HIP version in the file name " + builtins->file;
    return nullptr;
  }
  const std::vector<std::string> hip_defines = {
      "-DHIP_VERSION_MAJOR=" + m[1].str(), "-DHIP_VERSION_MINOR=" + m[2].str(),
      "-DHIP_VERSION_PATCH=" + m[3].str(),
      "--hip-version=" + m[1].str() + "." + m[2].str() + "." + m[3].str()};

  std::vector<fs::path> libraries, isa_libraries;
  ContentHasher libraries_hash;
  std::vector<std::string> needed = kLibraries;
  for (const auto& arch : Archs()) needed.push_back(IsaLibrary(arch));
  for (const auto& file : needed) {
    const auto path = FindBitcode(file);
    if (!path) {
      *why = "AMD GPU device library " + file +
             " not found (Debian: rocm-device-libs; deploy/install-deps.sh generates "
             "oclc_isa_version_942/950.bc)";
      return nullptr;
    }
    (file.starts_with("oclc_isa_version_") ? isa_libraries : libraries).push_back(*path);
    libraries_hash.UpdateField(file).UpdateField(ReadFile(*path));
  }
  const std::string version =
      clang->second + " (" + clang->first +
      "; hipRTC preamble sha256:" + ContentHash(preamble).substr(0, 12) + " of " + builtins->file +
      "; device libraries sha256:" + libraries_hash.HexDigest().substr(0, 12) + ")";
  return std::unique_ptr<ClangHipCompiler>(new ClangHipCompiler(clang->first, std::move(preamble),
                                                                hip_defines, std::move(libraries),
                                                                std::move(isa_libraries), version));
}

ClangHipCompiler::ClangHipCompiler(std::string clang, std::string preamble,
                                   std::vector<std::string> hip_defines,
                                   std::vector<fs::path> libraries,
                                   std::vector<fs::path> isa_libraries, std::string version)
    : clang_(std::move(clang)),
      preamble_(std::move(preamble)),
      hip_defines_(std::move(hip_defines)),
      libraries_(std::move(libraries)),
      isa_libraries_(std::move(isa_libraries)),
      version_(std::move(version)) {}

RtcOutput ClangHipCompiler::Compile(const std::string& source, const std::string& source_name,
                                    const std::vector<std::pair<std::string, std::string>>& headers,
                                    const std::vector<std::string>& options,
                                    const std::string& arch) {
  RtcOutput out;
  const auto& archs = Archs();
  const auto served = std::find(archs.begin(), archs.end(), arch);
  if (served == archs.end()) {
    out.log = "clang HIP path does not serve " + arch + " (it serves gfx942, gfx950)\n";
    return out;
  }
  const fs::path isa_library = isa_libraries_[served - archs.begin()];

  std::string folder_template = (fs::temp_directory_path() / "tiletune-clang-XXXXXX").string();
  if (!::mkdtemp(folder_template.data())) {
    out.log = "cannot make a folder below " + fs::temp_directory_path().string() + "\n";
    return out;
  }
  const fs::path work = folder_template;
  try {
    const fs::path code = work / source_name, object = work / "kernel.hsaco";
    WriteFile(code, source);
    WriteFile(work / "hiprtc_preamble.h", preamble_);
    for (const auto& [name, text] : headers) WriteFile(work / "include" / name, text);

    // -nogpuinc/-nogpulib: the preamble is the HIP header, the libraries are
    // linked by name below. Code object v5: v6 needs a device library ROCm
    // 5.2 lacks. clang >= 20 no longer defines __AMDGCN_WAVEFRONT_SIZE, which
    // the preamble uses; every target served is wave64. No offload bundle
    // (Debian has no clang-offload-bundler-22): a raw code object, as hipRTC
    // returns.
    std::vector<std::string> argv = {clang_,
                                     "-x",
                                     "hip",
                                     "--offload-arch=" + arch,
                                     "--offload-device-only",
                                     "--no-gpu-bundle-output",
                                     "-nogpuinc",
                                     "-nogpulib",
                                     "-O3",
                                     "-mcumode",
                                     "-mcode-object-version=5",
                                     "-D__HIPCC_RTC__",
                                     "-D__AMDGCN_WAVEFRONT_SIZE=64",
                                     "-include",
                                     (work / "hiprtc_preamble.h").string(),
                                     "-I" + (work / "include").string()};
    argv.insert(argv.end(), hip_defines_.begin(), hip_defines_.end());
    std::vector<fs::path> libraries = libraries_;
    libraries.push_back(isa_library);
    for (const auto& library : libraries) {
      argv.insert(argv.end(), {"-Xclang", "-mlink-builtin-bitcode", "-Xclang", library.string()});
    }
    argv.insert(argv.end(), options.begin(), options.end());
    argv.insert(argv.end(), {code.string(), "-o", object.string()});

    const CommandResult run = RunCommand(argv, kCompileCeiling);
    // Messages name the source as given, not its copy in the work folder.
    out.log = run.out + run.err;
    const std::string prefix = work.string() + "/";
    for (size_t at; (at = out.log.find(prefix)) != std::string::npos;)
      out.log.erase(at, prefix.size());
    if (run.status.success()) {
      out.binary = ReadFile(object);
      out.ok = !out.binary.empty();
      if (!out.ok) out.log += "clang wrote an empty code object for " + arch + "\n";
    } else {
      out.log += "clang failed for " + arch + ": " + run.status.ToString() + "\n";
    }
  } catch (const std::exception& e) {
    out.ok = false;
    out.log += std::string("clang HIP compile: ") + e.what() + "\n";
  }
  std::error_code ignored;
  fs::remove_all(work, ignored);
  return out;
}

}  // namespace tiletune::runtime::hip

namespace tiletune::runtime {

std::unique_ptr<RtcCompiler> OpenClangHip(std::string* why) {
  return hip::ClangHipCompiler::Open(why);
}

}  // namespace tiletune::runtime
