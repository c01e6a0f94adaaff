#include "runtime/host/host_backend.h"

#include <dlfcn.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <fstream>
#include <thread>

#include "kernels/source/host_source.h"
#include "tests/runtime/scratch_dir.h"
#include "tests/support/compiler_without_openblas.h"

namespace tiletune::runtime::host {
namespace {

namespace fs = std::filesystem;

// A kernel-shaped source small enough to compile in a fraction of a second;
// `value` makes sources distinct.
kernels::KernelSource SmallSource(int value) {
  kernels::KernelSource s;
  s.kernel_name = "test";
  s.entry = "tiletune_test_value";
  s.code =
      "#include \"answer.h\"\nextern \"C\" __attribute__((visibility(\"default\"))) int "
      "tiletune_test_value() { return ANSWER + " +
      std::to_string(value) + "; }\n";
  s.headers = {{"answer.h", "#define ANSWER 40\n"}};
  return s;
}

int CallEntry(const std::string& artifact, const std::string& entry) {
  void* lib = ::dlopen(artifact.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (!lib) return -1;
  auto* fn = reinterpret_cast<int (*)()>(::dlsym(lib, entry.c_str()));
  const int value = fn ? fn() : -2;
  ::dlclose(lib);
  return value;
}

std::unique_ptr<HostBackend> OpenBackend(const fs::path& cache,
                                         const std::string& compiler = "c++") {
  std::string why;
  auto backend = HostBackend::Open({compiler, cache, int64_t{1} << 30}, &why);
  EXPECT_TRUE(backend) << why;
  return backend;
}

// A compiler that records each compile (not the questions Open asks:
// --version, -print-file-name) and then runs c++, or sleeps when `hang` is
// set.
fs::path CountingCompiler(const fs::path& dir, bool hang = false) {
  const fs::path script = dir / "counting-c++";
  std::ofstream(script) << "#!/bin/sh\n"
                           "case \"$1\" in --version|-print-file-name=*) exec c++ \"$1\";; esac\n"
                           "echo compile >> '"
                        << (dir / "compiles").string() << "'\n"
                        << (hang ? "exec sleep 100\n" : "exec c++ \"$@\"\n");
  fs::permissions(script, fs::perms::owner_all);
  return script;
}

int CompileCount(const fs::path& dir) {
  std::ifstream in(dir / "compiles");
  int n = 0;
  for (std::string line; std::getline(in, line);) ++n;
  return n;
}

TEST(HostBackend, DescribesOneCpuDevice) {
  testing::ScratchDir dir;
  auto backend = OpenBackend(dir.path() / "cache");
  ASSERT_TRUE(backend);
  EXPECT_EQ(backend->name(), "host");
  EXPECT_TRUE(backend->RunsOnCompilerCores());
  const auto devices = backend->Devices();
  ASSERT_EQ(devices.size(), 1u);
  EXPECT_EQ(devices[0].id, "cpu:0");
  EXPECT_EQ(devices[0].backend, "host");
  EXPECT_EQ(devices[0].fingerprint.vendor(), "cpu");
  EXPECT_EQ(devices[0].fingerprint.device_class().size(), 16u);
  EXPECT_FALSE(devices[0].toolchain.compiler_version().empty());
  EXPECT_EQ(devices[0].toolchain.compiler_version().find('\n'), std::string::npos);
  EXPECT_EQ(devices[0].toolchain.kernel_library_version(), TILETUNE_KERNEL_LIBRARY_VERSION);
  EXPECT_EQ(devices[0].toolchain.runtime_version().rfind("glibc ", 0), 0u);
  EXPECT_TRUE(devices[0].toolchain.driver_version().empty());
}

TEST(HostBackend, CompilesALoadableArtifactThenHitsTheCache) {
  testing::ScratchDir dir;
  auto backend = OpenBackend(dir.path() / "cache", CountingCompiler(dir.path()).string());
  ASSERT_TRUE(backend);
  const auto device = backend->Devices()[0];

  const CompileResult first = backend->Compile(SmallSource(2), device, {});
  ASSERT_TRUE(first.ok) << first.log;
  EXPECT_FALSE(first.cache_hit);
  EXPECT_EQ(first.cache_key.size(), 64u);
  EXPECT_EQ(CallEntry(first.artifact_path, "tiletune_test_value"), 42);
  EXPECT_EQ(CompileCount(dir.path()), 1);

  const CompileResult second = backend->Compile(SmallSource(2), device, {});
  ASSERT_TRUE(second.ok);
  EXPECT_TRUE(second.cache_hit);
  EXPECT_EQ(second.artifact_path, first.artifact_path);
  EXPECT_EQ(second.cache_key, first.cache_key);
  EXPECT_EQ(CompileCount(dir.path()), 1) << "a cache hit ran the compiler";

  // A changed header is a different kernel.
  kernels::KernelSource changed = SmallSource(2);
  changed.headers[0].second = "#define ANSWER 50\n";
  const CompileResult third = backend->Compile(changed, device, {});
  ASSERT_TRUE(third.ok) << third.log;
  EXPECT_FALSE(third.cache_hit);
  EXPECT_EQ(CallEntry(third.artifact_path, "tiletune_test_value"), 52);
  // Work folders are cleaned up.
  EXPECT_TRUE(fs::is_empty(dir.path() / "cache" / "tmp"));
}

TEST(HostBackend, ReportsCompilerErrors) {
  testing::ScratchDir dir;
  auto backend = OpenBackend(dir.path() / "cache");
  ASSERT_TRUE(backend);
  kernels::KernelSource broken = SmallSource(0);
  broken.code += "int broken( {\n";
  const CompileResult r = backend->Compile(broken, backend->Devices()[0], {});
  EXPECT_FALSE(r.ok);
  EXPECT_FALSE(r.timed_out);
  EXPECT_NE(r.log.find("error"), std::string::npos) << r.log;
  EXPECT_TRUE(r.artifact_path.empty());
}

TEST(HostBackend, KillsACompilerPastItsTimeout) {
  testing::ScratchDir dir;
  auto backend = OpenBackend(dir.path() / "cache", CountingCompiler(dir.path(), true).string());
  ASSERT_TRUE(backend);
  const auto start = std::chrono::steady_clock::now();
  const CompileResult r = backend->Compile(SmallSource(0), backend->Devices()[0], {0.3});
  // Killed, not ended on its own after 100 s; only a hang comes near this.
  EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(60));
  EXPECT_FALSE(r.ok);
  EXPECT_TRUE(r.timed_out);
  EXPECT_NE(r.log.find("compile timeout"), std::string::npos) << r.log;
}

TEST(HostBackend, ConcurrentCompilesOfOneSourceLeaveOneValidArtifact) {
  testing::ScratchDir dir;
  auto backend = OpenBackend(dir.path() / "cache");
  ASSERT_TRUE(backend);
  const auto device = backend->Devices()[0];
  CompileResult results[2];
  std::thread t0([&] { results[0] = backend->Compile(SmallSource(7), device, {}); });
  std::thread t1([&] { results[1] = backend->Compile(SmallSource(7), device, {}); });
  t0.join();
  t1.join();
  ASSERT_TRUE(results[0].ok) << results[0].log;
  ASSERT_TRUE(results[1].ok) << results[1].log;
  EXPECT_EQ(results[0].artifact_path, results[1].artifact_path);
  int artifacts = 0;
  for (const auto& f : fs::directory_iterator(dir.path() / "cache")) {
    artifacts += f.path().extension() == ".so";
  }
  EXPECT_EQ(artifacts, 1);
  EXPECT_TRUE(fs::is_empty(dir.path() / "cache" / "tmp"));
  EXPECT_EQ(CallEntry(results[0].artifact_path, "tiletune_test_value"), 47);
}

// A source that calls OpenBLAS: loadable only when linked with it.
kernels::KernelSource OpenBlasSource() {
  kernels::KernelSource s;
  s.kernel_name = "openblas_test";
  s.entry = "tiletune_test_threads";
  s.code =
      "extern \"C\" int openblas_get_num_threads(void);\n"
      "extern \"C\" __attribute__((visibility(\"default\"))) int tiletune_test_threads() {\n"
      "  return openblas_get_num_threads() > 0 ? 42 : 0;\n}\n";
  return s;
}

// Where the compiler finds OpenBLAS (deploy/install-deps.sh installs it),
// the device says so and a source asking for it links it after the source,
// outlives dlclose (OpenBLAS's threads), and keys the cache apart from the
// same source without it, which does not load.
TEST(HostBackend, LinksOpenBlasWhereTheCompilerFindsIt) {
  testing::ScratchDir dir;
  auto backend = OpenBackend(dir.path() / "cache");
  ASSERT_TRUE(backend);
  const auto device = backend->Devices()[0];
  ASSERT_TRUE(device.has_openblas) << "install libopenblas0 (deploy/install-deps.sh)";
  EXPECT_NE(device.toolchain.runtime_version().find(", libopenblas"), std::string::npos)
      << device.toolchain.runtime_version();

  kernels::KernelSource linked = OpenBlasSource();
  linked.compile_options.emplace_back(kernels::host::kLinkOpenBlasOption);
  const CompileResult with = backend->Compile(linked, device, {});
  ASSERT_TRUE(with.ok) << with.log;
  EXPECT_EQ(CallEntry(with.artifact_path, "tiletune_test_threads"), 42);
  const auto& options = with.options;
  EXPECT_EQ(std::count(options.begin(), options.end(), kernels::host::kLinkOpenBlasOption), 0);
  EXPECT_NE(std::find(options.begin(), options.end(), "-Wl,-z,nodelete"), options.end());
  EXPECT_TRUE(std::any_of(options.begin(), options.end(), [](const std::string& o) {
    return o.ends_with("libopenblas.so.0");
  })) << ::testing::PrintToString(options);

  const CompileResult without = backend->Compile(OpenBlasSource(), device, {});
  ASSERT_TRUE(without.ok) << without.log;
  EXPECT_NE(without.cache_key, with.cache_key);
  EXPECT_EQ(CallEntry(without.artifact_path, "tiletune_test_threads"), -1) << "loaded unlinked";
}

// Where it does not, the backend still opens, says why and what the GEMM
// baseline then is, and fails a source that asks for OpenBLAS without
// running the compiler.
TEST(HostBackend, OpensWithoutOpenBlasAndSaysSo) {
  testing::ScratchDir dir;
  std::string why;
  auto backend = HostBackend::Open(
      {testing::CompilerWithoutOpenBlas(dir.path()).string(), dir.path() / "cache", 1 << 20}, &why);
  ASSERT_TRUE(backend) << why;
  EXPECT_NE(why.find("no OpenBLAS"), std::string::npos) << why;
  EXPECT_NE(why.find("host-naive"), std::string::npos) << why;
  const auto device = backend->Devices()[0];
  EXPECT_FALSE(device.has_openblas);
  EXPECT_EQ(device.toolchain.runtime_version().find("openblas"), std::string::npos);

  kernels::KernelSource linked = OpenBlasSource();
  linked.compile_options.emplace_back(kernels::host::kLinkOpenBlasOption);
  const CompileResult r = backend->Compile(linked, device, {});
  EXPECT_FALSE(r.ok);
  EXPECT_NE(r.log.find("openblas_test links OpenBLAS"), std::string::npos) << r.log;
}

TEST(HostBackend, OpenFailsWithAReasonForAMissingCompiler) {
  testing::ScratchDir dir;
  std::string why;
  EXPECT_FALSE(HostBackend::Open({"tiletune-no-such-compiler", dir.path(), 1 << 20}, &why));
  EXPECT_NE(why.find("tiletune-no-such-compiler"), std::string::npos) << why;
}

}  // namespace
}  // namespace tiletune::runtime::host
