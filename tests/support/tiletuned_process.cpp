#include "tests/support/tiletuned_process.h"

#include "tests/support/poll_until.h"
#include "tests/support/test_key.h"

#include <arpa/inet.h>
#include <fcntl.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <poll.h>
#include <pty.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <fstream>
#include <random>
#include <sstream>
#include <thread>

namespace tiletune::testing {
namespace fs = std::filesystem;
using namespace std::chrono_literals;

namespace {

std::string ReadFile(const fs::path& path) {
  std::ifstream in(path);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

// fork + exec with stdout/stderr sent to files; returns the child's pid.
pid_t Spawn(const std::vector<std::string>& argv, const fs::path& out, const fs::path& err) {
  const pid_t pid = fork();
  if (pid == 0) {
    const int o = open(out.c_str(), O_WRONLY | O_CREAT | O_APPEND, 0644);
    const int e = open(err.c_str(), O_WRONLY | O_CREAT | O_APPEND, 0644);
    dup2(o, STDOUT_FILENO);
    dup2(e, STDERR_FILENO);
    const int null = open("/dev/null", O_RDONLY);
    dup2(null, STDIN_FILENO);
    std::vector<char*> args;
    for (const auto& a : argv) args.push_back(const_cast<char*>(a.c_str()));
    args.push_back(nullptr);
    execv(args[0], args.data());
    _exit(127);
  }
  return pid;
}

// Waits for `pid` up to `timeout`; kills it after that. Returns the exit code
// or 128+signal.
int WaitFor(pid_t pid, std::chrono::milliseconds timeout) {
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  int status = 0;
  while (waitpid(pid, &status, WNOHANG) == 0) {
    if (std::chrono::steady_clock::now() > deadline) {
      kill(pid, SIGKILL);
      waitpid(pid, &status, 0);
      ADD_FAILURE() << "process " << pid << " outlived its " << timeout.count() << " ms";
      break;
    }
    std::this_thread::sleep_for(10ms);
  }
  if (WIFEXITED(status)) return WEXITSTATUS(status);
  if (WIFSIGNALED(status)) return 128 + WTERMSIG(status);
  return -1;
}

}  // namespace

// The processes whose parent is `parent` now.
std::vector<pid_t> ChildProcesses(pid_t parent) {
  std::vector<pid_t> children;
  for (const auto& entry : fs::directory_iterator("/proc")) {
    const std::string name = entry.path().filename();
    if (name.find_first_not_of("0123456789") != std::string::npos) continue;
    // "pid (comm) state ppid ...": comm may hold spaces, so read after its ')'.
    const std::string stat = ReadFile(entry.path() / "stat");
    const auto comm_end = stat.rfind(')');
    if (comm_end == std::string::npos) continue;
    std::istringstream fields(stat.substr(comm_end + 1));
    std::string state;
    pid_t ppid = 0;
    if (fields >> state >> ppid && ppid == parent) children.push_back(std::stoi(name));
  }
  return children;
}

std::string BinaryPath(const std::string& name) {
  return std::string(TILETUNE_BUILD_DIR) + "/bin/" + name;
}

TempDir::TempDir() {
  std::random_device rd;
  path_ = fs::temp_directory_path() /
          ("tiletune-test-" + std::to_string(getpid()) + "-" + std::to_string(rd()));
  fs::create_directories(path_);
}

TempDir::~TempDir() {
  std::error_code ec;
  fs::remove_all(path_, ec);
}

BackgroundCommand::BackgroundCommand(const std::vector<std::string>& argv)
    : pid_(Spawn(argv, dir_.path() / "out", dir_.path() / "err")) {}

BackgroundCommand::~BackgroundCommand() {
  if (pid_ > 0) {
    kill(pid_, SIGKILL);
    waitpid(pid_, nullptr, 0);
  }
}

std::string BackgroundCommand::out() const {
  return ReadFile(dir_.path() / "out");
}

std::string BackgroundCommand::err() const {
  return ReadFile(dir_.path() / "err");
}

void BackgroundCommand::Signal(int signal) const {
  if (pid_ > 0) kill(pid_, signal);
}

int BackgroundCommand::Wait(std::chrono::seconds timeout) {
  const int code = WaitFor(pid_, timeout);
  pid_ = -1;
  return code;
}

CommandResult RunCommand(const std::vector<std::string>& argv, std::chrono::seconds timeout) {
  BackgroundCommand command(argv);
  CommandResult result;
  result.exit_code = command.Wait(timeout);
  result.out = command.out();
  result.err = command.err();
  return result;
}

CommandResult RunOnTerminal(const std::vector<std::string>& argv, unsigned short columns,
                            std::chrono::seconds timeout) {
  winsize size{};
  size.ws_row = 24;
  size.ws_col = columns;
  int terminal = -1;
  const pid_t pid = forkpty(&terminal, nullptr, nullptr, &size);
  if (pid == 0) {
    std::vector<char*> args;
    for (const auto& a : argv) args.push_back(const_cast<char*>(a.c_str()));
    args.push_back(nullptr);
    execv(args[0], args.data());
    _exit(127);
  }
  CommandResult result;
  if (pid < 0) {
    ADD_FAILURE() << "forkpty: " << std::strerror(errno);
    return result;
  }
  // Read until the child's side closes (EIO), so that nothing it wrote is
  // lost.
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  char buf[4096];
  while (std::chrono::steady_clock::now() < deadline) {
    pollfd readable{.fd = terminal, .events = POLLIN, .revents = 0};
    if (poll(&readable, 1, 100) <= 0) continue;
    const ssize_t n = read(terminal, buf, sizeof(buf));
    if (n <= 0) break;
    result.out.append(buf, static_cast<size_t>(n));
  }
  const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
      deadline - std::chrono::steady_clock::now());
  result.exit_code = WaitFor(pid, std::max(left, std::chrono::milliseconds(10s)));
  close(terminal);
  return result;
}

TiletunedProcess::TiletunedProcess(fs::path data_dir, std::vector<std::string> extra_args)
    : data_dir_(std::move(data_dir)), extra_args_(std::move(extra_args)) {}

TiletunedProcess::~TiletunedProcess() {
  if (running()) KillWithChildren();
}

void TiletunedProcess::Start() {
  const fs::path ready = data_dir_ / "ready";
  fs::remove(ready);
  std::vector<std::string> argv = {BinaryPath("tiletuned"), "--data-dir",  data_dir_.string(),
                                   "--metrics-listen",      "127.0.0.1:0", "--ready-file",
                                   ready.string(),          "--log-level", "debug"};
  // tiletuned refuses a flag given twice.
  auto unless_given = [&](const std::string& flag, const std::string& value) {
    if (std::find(extra_args_.begin(), extra_args_.end(), flag) == extra_args_.end()) {
      argv.insert(argv.end(), {flag, value});
    }
  };
  unless_given("--listen", "127.0.0.1:0");
  // At the default niceness (10) the machine's other work starves the
  // compilers (a few % of a core each under a load of 15): a test's pace
  // would be the machine's load.
  unless_given("--compile-niceness", "0");
  // Host GEMMs against host-naive: whether a single-threaded GEMV beats
  // OpenBLAS depends on the CPU (one core's memory bandwidth bounds both on
  // an AVX-512 Xeon), and the tests that need a TUNED record must get one.
  unless_given("--host-openblas-baseline", "false");
  argv.insert(argv.end(), extra_args_.begin(), extra_args_.end());
  pid_ = Spawn(argv, data_dir_ / "tiletuned.out", log_path());
  const auto deadline = In(kEventCeiling);
  while (!fs::exists(ready)) {
    int status = 0;
    if (waitpid(pid_, &status, WNOHANG) == pid_) {
      pid_ = -1;
      FAIL() << "tiletuned exited during start:\n" << log();
    }
    if (std::chrono::steady_clock::now() > deadline) FAIL() << "tiletuned not ready:\n" << log();
    std::this_thread::sleep_for(20ms);
  }
  std::istringstream in(ReadFile(ready));
  std::string line;
  while (std::getline(in, line)) {
    if (line.rfind("grpc=", 0) == 0) address_ = line.substr(5);
    if (line.rfind("metrics=", 0) == 0) metrics_address_ = line.substr(8);
  }
}

int TiletunedProcess::Stop(int signal, std::chrono::seconds timeout) {
  if (!running()) return -1;
  kill(pid_, signal);
  const int code = WaitFor(pid_, timeout);
  pid_ = -1;
  return code;
}

int TiletunedProcess::KillWithChildren() {
  if (!running()) return -1;
  const std::vector<pid_t> children = ChildProcesses(pid_);
  const int code = Stop(SIGKILL);
  for (const pid_t child : children) kill(child, SIGKILL);
  return code;
}

std::string TiletunedProcess::log() const {
  return ReadFile(log_path());
}

std::shared_ptr<grpc::Channel> TiletunedProcess::Channel() const {
  return grpc::CreateChannel(address_, grpc::InsecureChannelCredentials());
}

std::unique_ptr<v1::TuningService::Stub> TiletunedProcess::Stub() const {
  return v1::TuningService::NewStub(Channel());
}

std::optional<std::string> HttpGet(const std::string& address, const std::string& path) {
  const auto colon = address.rfind(':');
  const int fd = socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_port = htons(static_cast<uint16_t>(std::stoi(address.substr(colon + 1))));
  inet_pton(AF_INET, address.substr(0, colon).c_str(), &addr.sin_addr);
  if (connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)) != 0) {
    close(fd);
    return std::nullopt;
  }
  const std::string request = "GET " + path + " HTTP/1.0\r\nHost: localhost\r\n\r\n";
  if (write(fd, request.data(), request.size()) != static_cast<ssize_t>(request.size())) {
    close(fd);
    return std::nullopt;
  }
  std::string response;
  char buf[4096];
  ssize_t n;
  while ((n = read(fd, buf, sizeof(buf))) > 0) response.append(buf, n);
  close(fd);
  const auto body = response.find("\r\n\r\n");
  if (body == std::string::npos) return std::nullopt;
  return response.substr(body + 4);
}

v1::KernelKey RowKey(const std::string& op, int64_t rows, int64_t cols) {
  v1::KernelKey key;
  key.set_op(op);
  key.set_input_dtype(v1::DTYPE_F32);
  for (auto [name, size] : {std::pair{"rows", rows}, {"cols", cols}}) {
    auto* d = key.add_shape();
    d->set_name(name);
    d->set_size(size);
  }
  return key;
}

v1::KernelKey GemmKey(int64_t m, int64_t n, int64_t k, std::vector<std::string> chain) {
  return TestKey("gemm", {{"m", m}, {"n", n}, {"k", k}}, chain);
}

v1::KernelKey DecodeGemmKey(std::vector<std::string> chain) {
  return GemmKey(1, kDecodeGemmN, kDecodeGemmK, std::move(chain));
}

}  // namespace tiletune::testing
