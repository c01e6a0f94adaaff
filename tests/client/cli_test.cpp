// The `tiletune` binary as a user runs it: real processes, real files, real
// (closed or silent) sockets.
#include <unistd.h>

#include <filesystem>
#include <fstream>

#include <gtest/gtest.h>

#include "loopback_ports.h"
#include "process_runner.h"

namespace tiletune {
namespace {

namespace fs = std::filesystem;
using std::chrono::milliseconds;
using testing::Lines;
using testing::LoopbackPort;
using testing::ProcessResult;
using testing::RunProcess;

const std::string kTiletune = std::string(TILETUNE_BUILD_DIR) + "/bin/tiletune";

ProcessResult Tiletune(std::vector<std::string> args) {
  args.insert(args.begin(), kTiletune);
  return RunProcess(args);
}

// A failed command prints exactly one line, "tiletune: ...", on stderr.
void ExpectOneErrorLine(const ProcessResult& r) {
  auto lines = Lines(r.err);
  ASSERT_EQ(lines.size(), 1u) << r.err;
  EXPECT_EQ(lines[0].rfind("tiletune: ", 0), 0u) << r.err;
}

class CliTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() /
           ("tiletune_cli_" + std::to_string(getpid()) + "_" +
            ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::create_directories(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }

  std::string Write(const std::string& name, const std::string& text) {
    fs::path path = dir_ / name;
    std::ofstream(path) << text;
    return path.string();
  }

  fs::path dir_;
};

TEST_F(CliTest, HelpListsTheExitCodes) {
  ProcessResult r = Tiletune({"--help"});
  EXPECT_EQ(r.exit_code, 0);
  for (const char* line :
       {"Exit codes:", "  0  ok", "  2  usage or bad input",
        "  3  daemon unreachable or deadline exceeded", "  4  not found",
        "  5  watched job ended FAILED or CANCELLED", "  6  import had rejects"}) {
    EXPECT_NE(r.out.find(line), std::string::npos) << line << "\n" << r.out;
  }
  for (const char* command :
       {"submit", "jobs", "lookup", "records", "devices", "health", "report"}) {
    EXPECT_NE(r.out.find(command), std::string::npos) << command;
  }
  EXPECT_TRUE(r.err.empty()) << r.err;
}

TEST_F(CliTest, UsageErrorsExit2WithOneLine) {
  for (std::vector<std::string> args :
       std::vector<std::vector<std::string>>{{},
                                             {"frobnicate"},
                                             {"jobs", "list", "--state", "sleeping"},
                                             {"lookup", "--shape", "m=1"},
                                             {"lookup", "--op", "gemm", "--dtype", "f33"},
                                             {"lookup", "--op", "gemm", "--gate", "geglu"},
                                             {"--timeout", "0", "health"},
                                             {"report", "j-1"}}) {
    ProcessResult r = Tiletune(args);
    EXPECT_EQ(r.exit_code, 2) << ::testing::PrintToString(args) << r.err;
    ExpectOneErrorLine(r);
  }
}

TEST_F(CliTest, AMistypedOrMissingCommandListsTheCommandsAndTheNearest) {
  const auto says = [&](std::vector<std::string> args, const std::string& text) {
    ProcessResult r = Tiletune(args);
    EXPECT_EQ(r.exit_code, 2) << ::testing::PrintToString(args);
    ExpectOneErrorLine(r);
    return r.err.find(text) != std::string::npos;
  };
  EXPECT_TRUE(says({"submitt"},
                   "'submitt' is not a command of tiletune; did you mean 'submit'?; "
                   "commands: submit, jobs, lookup"));
  EXPECT_TRUE(says({"jobs", "lst"}, "did you mean 'list'?; commands: list, show"));
  EXPECT_FALSE(says({"frobnicate"}, "did you mean"));
  EXPECT_TRUE(says({}, "tiletune needs a command; commands: submit, jobs"));
  EXPECT_TRUE(says({"records"}, "tiletune records needs a command; commands: list"));
  EXPECT_TRUE(
      says({"--timeout", "0", "health"}, "must be more than 0 and at most 86400 seconds, not 0"));
}

TEST_F(CliTest, LookupFlagSyntaxIsCheckedBeforeCallingTheDaemon) {
  LoopbackPort port(LoopbackPort::Mode::kRefusing);
  ProcessResult r =
      Tiletune({"--server", port.address(), "lookup", "--op", "gemm", "--shape", "m=12x"});
  EXPECT_EQ(r.exit_code, 2);
  ExpectOneErrorLine(r);
  EXPECT_EQ(Lines(r.err)[0], "tiletune: --shape: m: '12x' is not an integer");

  r = Tiletune({"--server", port.address(), "lookup", "--op", "gemm", "--chain", "bias,scale=x"});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("--chain: 'scale=x'"), std::string::npos) << r.err;
}

TEST_F(CliTest, SubmitOfAMissingFileExits2) {
  std::string missing = (dir_ / "missing.yaml").string();
  ProcessResult r = Tiletune({"submit", missing});
  EXPECT_EQ(r.exit_code, 2);
  ExpectOneErrorLine(r);
  EXPECT_EQ(Lines(r.err)[0], "tiletune: " + missing + ": cannot read: No such file or directory");
  EXPECT_TRUE(r.out.empty());
}

TEST_F(CliTest, SubmitOfAMalformedSpecNamesTheField) {
  std::string spec = Write("job.yaml",
                           "name: example\n"
                           "kernels:\n"
                           "  - op: gemm\n"
                           "    dtype: f32\n"
                           "    shape: {m: 128, n: 2x56, k: 64}\n");
  // A refusing server proves the file is rejected before any call.
  LoopbackPort port(LoopbackPort::Mode::kRefusing);
  ProcessResult r = Tiletune({"--server", port.address(), "submit", spec});
  EXPECT_EQ(r.exit_code, 2);
  ExpectOneErrorLine(r);
  EXPECT_EQ(Lines(r.err)[0],
            "tiletune: " + spec + ": kernels[0].shape.n: expected an integer, got '2x56' (line 5)");
}

TEST_F(CliTest, AValidSpecAgainstAClosedPortExits3) {
  std::string spec = Write("job.json", R"({"kernels": [{"op": "gemm", "shape": {"m": 8}}]})");
  LoopbackPort port(LoopbackPort::Mode::kRefusing);
  ProcessResult r = Tiletune({"--server", port.address(), "submit", spec, "--watch"});
  EXPECT_EQ(r.exit_code, 3);
  ExpectOneErrorLine(r);
  EXPECT_NE(r.err.find("cannot reach tiletuned at " + port.address()), std::string::npos) << r.err;
}

TEST_F(CliTest, HealthAgainstAClosedPortExits3Quickly) {
  LoopbackPort port(LoopbackPort::Mode::kRefusing);
  ProcessResult r = Tiletune({"--server", port.address(), "--timeout", "1", "health"});
  EXPECT_EQ(r.exit_code, 3);
  ExpectOneErrorLine(r);
  EXPECT_LT(r.elapsed, milliseconds(900));
  EXPECT_TRUE(r.out.empty()) << r.out;
}

TEST_F(CliTest, EveryCommandAgainstAClosedPortExits3) {
  LoopbackPort port(LoopbackPort::Mode::kRefusing);
  std::string jsonl = Write("records.jsonl", "{}\n");
  for (std::vector<std::string> args :
       std::vector<std::vector<std::string>>{{"jobs", "list"},
                                             {"jobs", "show", "j1"},
                                             {"jobs", "watch", "j1"},
                                             {"jobs", "cancel", "j1"},
                                             {"lookup", "--op", "gemm", "--shape", "m=1,n=2,k=3"},
                                             {"records", "list"},
                                             {"records", "export"},
                                             {"records", "import", jsonl},
                                             {"devices"},
                                             {"--json", "health"}}) {
    args.insert(args.begin(), {"--server", port.address()});
    ProcessResult r = Tiletune(args);
    EXPECT_EQ(r.exit_code, 3) << ::testing::PrintToString(args) << r.err;
    ExpectOneErrorLine(r);
    EXPECT_TRUE(r.out.empty()) << r.out;
  }
}

TEST_F(CliTest, ExportToAFileLeavesNothingWhenTheDaemonIsUnreachable) {
  LoopbackPort port(LoopbackPort::Mode::kRefusing);
  fs::path out = dir_ / "records.jsonl";
  ProcessResult r = Tiletune({"--server", port.address(), "records", "export", "-o", out.string()});
  EXPECT_EQ(r.exit_code, 3);
  EXPECT_FALSE(fs::exists(out));
  EXPECT_FALSE(fs::exists(out.string() + ".partial"));
}

TEST_F(CliTest, ASilentDaemonRunsIntoTheTimeout) {
  LoopbackPort port(LoopbackPort::Mode::kSilent);
  ProcessResult r = Tiletune({"--server", port.address(), "--timeout", "0.5", "jobs", "list"});
  EXPECT_EQ(r.exit_code, 3);
  ExpectOneErrorLine(r);
  EXPECT_EQ(Lines(r.err)[0],
            "tiletune: no answer from tiletuned at " + port.address() + " within 0.5s (--timeout)");
  EXPECT_GE(r.elapsed, milliseconds(450));
  EXPECT_LT(r.elapsed, milliseconds(3000));
}

TEST_F(CliTest, ServerComesFromTheEnvironment) {
  LoopbackPort port(LoopbackPort::Mode::kRefusing);
  ProcessResult r =
      RunProcess({"/usr/bin/env", "TILETUNE_SERVER=" + port.address(), kTiletune, "health"});
  EXPECT_EQ(r.exit_code, 3);
  EXPECT_NE(r.err.find(port.address()), std::string::npos) << r.err;
}

}  // namespace
}  // namespace tiletune
