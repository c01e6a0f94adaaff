#pragma once

#include <sys/types.h>

#include <chrono>
#include <map>
#include <optional>
#include <string>
#include <vector>

namespace tiletune::runtime {

// How a child process ended.
struct ExitStatus {
  bool exited = false;  // returned from main / called exit
  int code = 0;         // exit code when exited
  int signal = 0;       // terminating signal otherwise
  bool success() const { return exited && code == 0; }
  // "exit code 3", "killed by SIGSEGV".
  std::string ToString() const;
};

// "SIGSEGV" for SIGSEGV; "signal 42" for one without a name.
std::string SignalName(int signal);

// The Linux scheduling policy a child runs under (sched(7)); what it starts
// inherits it.
enum class SchedPolicy {
  kOther,  // SCHED_OTHER, as the parent
  kBatch,  // SCHED_BATCH: CPU-bound work, never preempts others on waking
  kIdle,   // SCHED_IDLE: runs only when no other thread wants the core
};

// How a child competes with its parent (and everyone else) for the CPUs.
struct CpuPriority {
  // Added to the parent's nice value for the child's process group (what
  // it starts inherits it); 0 keeps the parent's.
  int niceness = 0;
  SchedPolicy policy = SchedPolicy::kOther;
};

struct ProcessSpec {
  std::vector<std::string> argv;  // argv[0] is looked up in PATH
  // Set in (or overriding) the parent's environment.
  std::map<std::string, std::string> env;
  // Each stream is either a pipe to the parent or: stdin /dev/null, stdout
  // and stderr the parent's own.
  bool pipe_stdin = false;
  bool pipe_stdout = false;
  bool pipe_stderr = false;
  CpuPriority priority;
};

// Makes the process groups of the children this process starts from now on
// (ChildProcess::Start) die with it, also when it is killed with SIGKILL: a
// small process forked here is told each child's group and kills the
// groups still alive when its pipe from this process closes, which the
// kernel does however this process ends. A child's own children are in its
// group (a compiler driver's cc1plus, as, ld) and die with it. Call it
// once, before any thread starts. Throws std::system_error when the pipe
// or the process cannot be made.
void KillChildGroupsOnExit();

// A child process leading its own process group, so that killing it also
// kills whatever it started (a compiler driver's cc1plus, as, ld). The
// parent's ends of the pipes are non-blocking and close-on-exec. Destroying
// a ChildProcess that was not waited for kills its group and reaps it.
class ChildProcess {
 public:
  // Throws std::system_error naming argv[0] when it cannot be started.
  static ChildProcess Start(const ProcessSpec& spec);

  ChildProcess(ChildProcess&& other) noexcept;
  ChildProcess& operator=(ChildProcess&& other) noexcept;
  ChildProcess(const ChildProcess&) = delete;
  ChildProcess& operator=(const ChildProcess&) = delete;
  ~ChildProcess();

  pid_t pid() const { return pid_; }
  int stdin_fd() const { return stdin_fd_; }  // -1 unless piped (or closed)
  int stdout_fd() const { return stdout_fd_; }
  int stderr_fd() const { return stderr_fd_; }
  void CloseStdin();

  // Sends `signal` to the whole process group; a no-op once reaped.
  void KillGroup(int signal);
  // Blocks until the child ends and reaps it.
  ExitStatus Wait();
  // Reaps the child if it has ended.
  std::optional<ExitStatus> TryWait();
  bool reaped() const { return status_.has_value(); }

 private:
  ChildProcess() = default;
  void Release();

  pid_t pid_ = -1;
  int stdin_fd_ = -1, stdout_fd_ = -1, stderr_fd_ = -1;
  std::optional<ExitStatus> status_;
};

struct CommandResult {
  ExitStatus status;
  bool timed_out = false;  // killed (with its process group) at the deadline
  std::string out;
  std::string err;
  double seconds = 0;
};

// Runs a command to completion, capturing stdout and stderr. Past `timeout`
// the process group is killed with SIGKILL. Throws std::system_error when the
// command cannot be started.
CommandResult RunCommand(const std::vector<std::string>& argv, std::chrono::milliseconds timeout,
                         const std::map<std::string, std::string>& env = {},
                         const CpuPriority& priority = {});

}  // namespace tiletune::runtime
