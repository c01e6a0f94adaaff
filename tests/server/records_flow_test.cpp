// The CLI against the real daemon: submit --watch, lookup, records export
// and import into a second daemon, duplicate imports, malformed job files.
#include <gtest/gtest.h>
#include <signal.h>

#include <fstream>
#include <regex>

#include "db/tuning_store.h"
#include "tests/support/tiletuned_process.h"

namespace tiletune::testing {
namespace {

class CliFlow : public ::testing::Test {
 protected:
  CommandResult Cli(const TiletunedProcess& daemon, std::vector<std::string> args) {
    args.insert(args.begin(), {BinaryPath("tiletune"), "--server", daemon.address()});
    return RunCommand(args);
  }
  TempDir dir_;
};

TEST_F(CliFlow, SubmitWatchLookupExportImport) {
  TiletunedProcess daemon(dir_.path() / "a");
  std::filesystem::create_directories(dir_.path() / "a");
  daemon.Start();

  const auto spec = dir_.path() / "job.yaml";
  std::ofstream(spec) << "name: cli\nstrategy: exhaustive\nbudget: {max_variants: 3}\n"
                         "kernels:\n"
                         "  - op: rmsnorm\n    dtype: f32\n    shape: {rows: 64, cols: 333}\n"
                         "  - op: gemm\n    dtype: f32\n    shape: {m: 64, n: 96, k: 80}\n"
                         "    chain: [bias, relu]\n";
  auto submit = Cli(daemon, {"submit", spec.string(), "--watch"});
  ASSERT_EQ(submit.exit_code, 0) << submit.err << submit.out;
  EXPECT_NE(submit.out.find("rmsnorm"), std::string::npos) << submit.out;

  auto jobs = Cli(daemon, {"--json", "jobs", "list"});
  ASSERT_EQ(jobs.exit_code, 0) << jobs.err;
  EXPECT_NE(jobs.out.find("JOB_SUCCEEDED"), std::string::npos) << jobs.out;

  auto lookup =
      Cli(daemon, {"lookup", "--op", "rmsnorm", "--dtype", "f32", "--shape", "rows=64,cols=333"});
  ASSERT_EQ(lookup.exit_code, 0) << lookup.err;
  // The host CPU has no ceilings: the rates, and the fraction "unknown".
  EXPECT_NE(lookup.out.find("roofline"), std::string::npos) << lookup.out;
  EXPECT_NE(lookup.out.find("unknown: no ceilings for this device"), std::string::npos)
      << lookup.out;
  auto listed = Cli(daemon, {"records", "list"});
  ASSERT_EQ(listed.exit_code, 0) << listed.err;
  EXPECT_NE(listed.out.find("TFLOP/s"), std::string::npos) << listed.out;
  EXPECT_NE(listed.out.find("% OF ROOFLINE"), std::string::npos) << listed.out;
  EXPECT_NE(listed.out.find("unknown"), std::string::npos) << listed.out;

  const auto exported = dir_.path() / "records.jsonl";
  auto exp = Cli(daemon, {"records", "export", "-o", exported.string()});
  ASSERT_EQ(exp.exit_code, 0) << exp.err;
  std::ifstream in(exported);
  int lines = 0;
  for (std::string line; std::getline(in, line);) lines += line.empty() ? 0 : 1;
  EXPECT_EQ(lines, 2);

  TiletunedProcess other(dir_.path() / "b");
  std::filesystem::create_directories(dir_.path() / "b");
  other.Start();
  auto imported = Cli(other, {"records", "import", exported.string()});
  ASSERT_EQ(imported.exit_code, 0) << imported.err << imported.out;
  // Not served until re-measured here.
  EXPECT_NE(imported.out.find("2 records unverified until verify job"), std::string::npos)
      << imported.out;
  auto again = Cli(other, {"records", "import", exported.string()});
  EXPECT_EQ(again.exit_code, 6) << again.err << again.out;
  EXPECT_NE((again.out + again.err).find("records.jsonl:1: record.key"), std::string::npos)
      << again.out << again.err;
  // Trusted: served at once, as they came.
  auto replaced = Cli(other, {"records", "import", "--replace", "--trust", exported.string()});
  EXPECT_EQ(replaced.exit_code, 0) << replaced.err;

  // A file with one bad line imports nothing.
  const auto mixed = dir_.path() / "mixed.jsonl";
  {
    std::ifstream src(exported);
    std::string first;
    std::getline(src, first);
    std::ofstream(mixed) << first
                         << "\n{\"schemaVersion\": 1, \"record\": {\"key\": {\"op\": "
                            "\"nope\"}}}\n";
  }
  auto rejected = Cli(other, {"records", "import", "--replace", mixed.string()});
  EXPECT_EQ(rejected.exit_code, 6);
  EXPECT_NE((rejected.out + rejected.err).find("record.key.op"), std::string::npos)
      << rejected.out << rejected.err;

  auto hit = Cli(other, {"--json", "lookup", "--op", "gemm", "--dtype", "f32", "--shape",
                         "m=64,n=96,k=80", "--chain", "bias,relu"});
  ASSERT_EQ(hit.exit_code, 0) << hit.err;
  // The imported record kept its roofline: a positive TFLOP/s, no fraction.
  std::smatch tflops;
  const std::regex achieved(R"re("achieved_tflops":\s*([0-9.eE+-]+))re");
  ASSERT_TRUE(std::regex_search(hit.out, tflops, achieved)) << hit.out;
  EXPECT_GT(std::stod(tflops[1]), 0) << hit.out;
  EXPECT_EQ(hit.out.find("peak_tflops"), std::string::npos) << hit.out;
  EXPECT_EQ(other.Stop(SIGTERM), 0);
  auto store = db::OpenSqliteStore({other.db_path().string()});
  EXPECT_EQ(store->ListRecords("", "", 100, "").records.size(), 2u);
  EXPECT_EQ(store->IntegrityCheck(), "ok");
}

TEST_F(CliFlow, MalformedJobFileIsExitTwoAndQueuesNothing) {
  TiletunedProcess daemon(dir_.path());
  daemon.Start();
  const auto spec = dir_.path() / "bad.yaml";
  std::ofstream(spec) << "kernels:\n  - op: gemm\n    dtype: f32\n    shape: {m: x, n: 8, k: 8}\n";
  auto result = Cli(daemon, {"submit", spec.string()});
  EXPECT_EQ(result.exit_code, 2);
  EXPECT_NE(result.err.find("kernels[0].shape.m"), std::string::npos) << result.err;

  std::ofstream(spec) << "kernels:\n  - op: gemm\n    dtype: f32\n    shape: {m: -3, n: 8, k: 8}\n";
  result = Cli(daemon, {"submit", spec.string()});
  EXPECT_EQ(result.exit_code, 2);
  EXPECT_NE(result.err.find("spec.kernels[0].shape"), std::string::npos) << result.err;

  auto jobs = Cli(daemon, {"--json", "jobs", "list"});
  EXPECT_EQ(jobs.exit_code, 0);
  EXPECT_EQ(jobs.out.find("\"id\""), std::string::npos) << jobs.out;
}

}  // namespace
}  // namespace tiletune::testing
