#pragma once

#include <grpcpp/grpcpp.h>
#include <sys/types.h>

#include <chrono>
#include <filesystem>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "tests/support/poll_until.h"
#include "tiletune/v1/tiletune.grpc.pb.h"

namespace tiletune::testing {

// A real tiletuned started as a subprocess on 127.0.0.1 with its own data
// folder, for integration tests. Ports are picked by the daemon (port 0,
// unless `extra_args` holds --listen) and read back from its ready file.
class TiletunedProcess {
 public:
  // `data_dir` is kept across restarts of the same object.
  explicit TiletunedProcess(std::filesystem::path data_dir,
                            std::vector<std::string> extra_args = {});
  ~TiletunedProcess();

  // Starts the daemon and waits until it serves (or fails the test).
  void Start();
  // Sends `signal` and waits for the process; returns its exit code, or
  // 128+signal when it died from one.
  int Stop(int signal, std::chrono::seconds timeout = std::chrono::seconds(60));
  // SIGKILL to the daemon and then to its child processes, which would
  // outlive it (a worker spinning in a planted hang); returns Stop's code.
  int KillWithChildren();
  bool running() const { return pid_ > 0; }
  // For signals that do not end it (SIGSTOP, SIGCONT).
  pid_t pid() const { return pid_; }

  const std::string& address() const { return address_; }
  const std::string& metrics_address() const { return metrics_address_; }
  std::filesystem::path db_path() const { return data_dir_ / "tiletune.db"; }
  std::filesystem::path log_path() const { return data_dir_ / "tiletuned.log"; }
  std::string log() const;

  std::unique_ptr<v1::TuningService::Stub> Stub() const;
  std::shared_ptr<grpc::Channel> Channel() const;

 private:
  std::filesystem::path data_dir_;
  std::vector<std::string> extra_args_;
  pid_t pid_ = -1;
  std::string address_;
  std::string metrics_address_;
};

// The processes whose parent is `parent` now.
std::vector<pid_t> ChildProcesses(pid_t parent);

// Paths of the built programs.
std::string BinaryPath(const std::string& name);

// Runs a program to completion; returns exit code and stdout/stderr.
struct CommandResult {
  int exit_code = -1;
  std::string out;
  std::string err;
};
CommandResult RunCommand(const std::vector<std::string>& argv,
                         std::chrono::seconds timeout = kEventCeiling);

// Runs a program on a pseudo-terminal `columns` wide (its stdin, stdout and
// stderr); `out` holds all it wrote, carriage returns and escape sequences
// included.
CommandResult RunOnTerminal(const std::vector<std::string>& argv, unsigned short columns,
                            std::chrono::seconds timeout = std::chrono::seconds(120));

// A fresh temporary folder removed at destruction.
class TempDir {
 public:
  TempDir();
  ~TempDir();
  const std::filesystem::path& path() const { return path_; }

 private:
  std::filesystem::path path_;
};

// A program running in the background, its stdout and stderr going to files
// that can be read while it runs; killed at destruction if still running.
class BackgroundCommand {
 public:
  explicit BackgroundCommand(const std::vector<std::string>& argv);
  ~BackgroundCommand();

  std::string out() const;
  std::string err() const;
  void Signal(int signal) const;
  // Its exit code, or 128+signal; after `timeout` it is killed and the test
  // fails.
  int Wait(std::chrono::seconds timeout = std::chrono::seconds(120));

 private:
  TempDir dir_;
  pid_t pid_ = -1;
};

// Plain HTTP GET on loopback (for /metrics).
std::optional<std::string> HttpGet(const std::string& address, const std::string& path);

// A gemm/softmax key for tests.
v1::KernelKey GemmKey(int64_t m, int64_t n, int64_t k, std::vector<std::string> chain = {});
v1::KernelKey RowKey(const std::string& op, int64_t rows, int64_t cols);

// The decode GEMM's size (m = 1: a GEMV). Against host-naive, the tests'
// host baseline (TiletunedProcess starts daemons with
// --host-openblas-baseline false), tuning wins it by far. Against OpenBLAS
// it depends on the CPU: 2.7x on a 2-core EPYC, where OpenBLAS packs all of
// B for one row; about 1.0x on an AVX-512 Xeon, where one core's memory
// bandwidth bounds both.
inline constexpr int64_t kDecodeGemmN = 512, kDecodeGemmK = 512;
// That GEMM, f32, B row-major.
v1::KernelKey DecodeGemmKey(std::vector<std::string> chain = {});
// The random strategy's seed that tries host_gemm_rowwise first among the
// decode GEMM's 49 host variants (any chain, layout or CPU count;
// tests/tuner/search_strategy_test.cpp holds it to that), so that a job of
// a few variants finds the winner.
inline constexpr uint64_t kDecodeGemmSeed = 21;

}  // namespace tiletune::testing
