#include "subprocess.h"

#include <fcntl.h>
#include <poll.h>
#include <sched.h>
#include <signal.h>
#include <spawn.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstdint>
#include <system_error>
#include <utility>

extern char** environ;

namespace tiletune::runtime {
namespace {

using Clock = std::chrono::steady_clock;

ExitStatus FromWaitStatus(int status) {
  ExitStatus s;
  if (WIFEXITED(status)) {
    s.exited = true;
    s.code = WEXITSTATUS(status);
  } else if (WIFSIGNALED(status)) {
    s.signal = WTERMSIG(status);
  }
  return s;
}

void CloseFd(int& fd) {
  if (fd >= 0) ::close(fd);
  fd = -1;
}

// The parent's environment with `overrides` applied, as "NAME=value" strings.
std::vector<std::string> MergedEnvironment(const std::map<std::string, std::string>& overrides) {
  std::map<std::string, std::string> env;
  for (char** e = environ; *e; ++e) {
    const std::string entry(*e);
    const auto eq = entry.find('=');
    if (eq != std::string::npos) env[entry.substr(0, eq)] = entry.substr(eq + 1);
  }
  for (const auto& [name, value] : overrides) env[name] = value;
  std::vector<std::string> out;
  for (const auto& [name, value] : env) out.push_back(name + "=" + value);
  return out;
}

std::vector<char*> CStrings(std::vector<std::string>& strings) {
  std::vector<char*> out;
  for (auto& s : strings) out.push_back(s.data());
  out.push_back(nullptr);
  return out;
}

// Owns the spawn attributes and file actions so every exit path frees them.
struct SpawnSetup {
  posix_spawn_file_actions_t actions;
  posix_spawnattr_t attr;
  SpawnSetup() {
    posix_spawn_file_actions_init(&actions);
    posix_spawnattr_init(&attr);
  }
  ~SpawnSetup() {
    posix_spawn_file_actions_destroy(&actions);
    posix_spawnattr_destroy(&attr);
  }
  SpawnSetup(const SpawnSetup&) = delete;
  SpawnSetup& operator=(const SpawnSetup&) = delete;
};

// The write end of the pipe to the group keeper (KillChildGroupsOnExit);
// -1 without one.
std::atomic<int> group_keeper_fd{-1};

// One message to the keeper; smaller than PIPE_BUF, so each write is whole.
struct KeeperMessage {
  int32_t started;  // 1: the group was started, 0: it was reaped
  pid_t group;
};

void TellGroupKeeper(bool started, pid_t group) {
  const int fd = group_keeper_fd.load();
  if (fd < 0) return;
  const KeeperMessage message{started ? 1 : 0, group};
  // A keeper that is gone (EPIPE: SIGPIPE is ignored or blocked) costs only
  // the guard.
  while (::write(fd, &message, sizeof message) < 0 && errno == EINTR) {
  }
}

// The keeper's whole life, in a child forked from a process that may have
// threads: async-signal-safe calls only, no allocation.
[[noreturn]] void KeepGroups(int fd) {
  constexpr int kMaxGroups = 4096;
  pid_t groups[kMaxGroups];
  int count = 0;
  KeeperMessage message;
  for (;;) {
    const ssize_t n = ::read(fd, &message, sizeof message);
    if (n < 0 && errno == EINTR) continue;
    if (n != sizeof message) break;  // end of file: the parent is gone
    if (message.started) {
      if (count < kMaxGroups) groups[count++] = message.group;
      continue;
    }
    for (int i = 0; i < count; ++i) {
      if (groups[i] == message.group) {
        groups[i] = groups[--count];
        break;
      }
    }
  }
  for (int i = 0; i < count; ++i) ::kill(-groups[i], SIGKILL);
  ::_exit(0);
}

// Appends what a non-blocking pipe holds now; false once it reached end of
// file (or failed), after which the caller stops polling it.
bool ReadAvailable(int fd, std::string& into) {
  char buf[65536];
  for (;;) {
    const ssize_t n = ::read(fd, buf, sizeof buf);
    if (n > 0) {
      into.append(buf, static_cast<size_t>(n));
    } else if (n == 0) {
      return false;
    } else if (errno != EINTR) {
      return errno == EAGAIN;
    }
  }
}

}  // namespace

void KillChildGroupsOnExit() {
  int fds[2];
  if (::pipe2(fds, O_CLOEXEC) != 0) {
    throw std::system_error(errno, std::generic_category(), "pipe to the child group keeper");
  }
  const pid_t pid = ::fork();
  if (pid < 0) {
    const int e = errno;
    ::close(fds[0]);
    ::close(fds[1]);
    throw std::system_error(e, std::generic_category(), "fork of the child group keeper");
  }
  if (pid == 0) {
    // Holds nothing of the parent's but its end of the pipe (no sockets, no
    // database, no terminal), and stays out of its process group, so that
    // Ctrl-C reaches the parent and its children, not the keeper.
    const int keep = ::fcntl(fds[0], F_DUPFD, 10);  // clear of 0-3 whatever was open
    const int null = ::open("/dev/null", O_RDWR);
    for (int fd = 0; fd < 3; ++fd) ::dup2(null, fd);
    ::dup2(keep, 3);
    ::close_range(4, ~0U, 0);
    ::setpgid(0, 0);
    KeepGroups(3);
  }
  ::close(fds[0]);
  group_keeper_fd.store(fds[1]);
}

std::string SignalName(int signal) {
  const char* abbrev = sigabbrev_np(signal);
  return abbrev ? std::string("SIG") + abbrev : "signal " + std::to_string(signal);
}

std::string ExitStatus::ToString() const {
  if (exited) return "exit code " + std::to_string(code);
  return "killed by " + SignalName(signal);
}

ChildProcess ChildProcess::Start(const ProcessSpec& spec) {
  if (spec.argv.empty()) {
    throw std::system_error(EINVAL, std::generic_category(), "ProcessSpec.argv is empty");
  }
  const std::string& program = spec.argv[0];
  int in[2] = {-1, -1}, out[2] = {-1, -1}, err[2] = {-1, -1};
  auto close_all = [&] {
    for (int* p : {in, out, err}) {
      CloseFd(p[0]);
      CloseFd(p[1]);
    }
  };
  for (auto [wanted, fds] : {std::pair{spec.pipe_stdin, in}, std::pair{spec.pipe_stdout, out},
                             std::pair{spec.pipe_stderr, err}}) {
    if (wanted && ::pipe2(fds, O_CLOEXEC) != 0) {
      const int e = errno;
      close_all();
      throw std::system_error(e, std::generic_category(), "pipe for " + program);
    }
  }

  SpawnSetup setup;
  // Pipes are close-on-exec; dup2 onto 0/1/2 clears that flag on the copy.
  if (spec.pipe_stdin) {
    posix_spawn_file_actions_adddup2(&setup.actions, in[0], STDIN_FILENO);
  } else {
    posix_spawn_file_actions_addopen(&setup.actions, STDIN_FILENO, "/dev/null", O_RDONLY, 0);
  }
  if (spec.pipe_stdout) posix_spawn_file_actions_adddup2(&setup.actions, out[1], STDOUT_FILENO);
  if (spec.pipe_stderr) posix_spawn_file_actions_adddup2(&setup.actions, err[1], STDERR_FILENO);
  // Own process group; default signal handling and an empty mask whatever
  // the parent has set (a daemon ignores SIGPIPE, threads block signals).
  sigset_t all, none;
  sigfillset(&all);
  sigemptyset(&none);
  posix_spawnattr_setpgroup(&setup.attr, 0);
  posix_spawnattr_setsigdefault(&setup.attr, &all);
  posix_spawnattr_setsigmask(&setup.attr, &none);
  posix_spawnattr_setflags(&setup.attr,
                           POSIX_SPAWN_SETPGROUP | POSIX_SPAWN_SETSIGDEF | POSIX_SPAWN_SETSIGMASK);

  std::vector<std::string> args = spec.argv;
  std::vector<std::string> env = MergedEnvironment(spec.env);
  std::vector<char*> argv = CStrings(args), envp = CStrings(env);
  pid_t pid = -1;
  const int rc =
      ::posix_spawnp(&pid, program.c_str(), &setup.actions, &setup.attr, argv.data(), envp.data());
  if (rc != 0) {
    close_all();
    throw std::system_error(rc, std::generic_category(), "cannot start " + program);
  }

  // posix_spawn cannot set these (glibc's refuses SCHED_BATCH and
  // SCHED_IDLE); the child is a few instructions old, and whatever it starts
  // later inherits them. Best effort: a failure (the child already gone)
  // leaves it at the parent's priority.
  if (spec.priority.policy != SchedPolicy::kOther) {
    const sched_param zero{};  // the only priority either policy has
    ::sched_setscheduler(
        pid, spec.priority.policy == SchedPolicy::kBatch ? SCHED_BATCH : SCHED_IDLE, &zero);
  }
  if (spec.priority.niceness != 0) {
    errno = 0;
    const int base = ::getpriority(PRIO_PROCESS, 0);
    if (errno == 0) ::setpriority(PRIO_PGRP, static_cast<id_t>(pid), base + spec.priority.niceness);
  }
  TellGroupKeeper(true, pid);
  ChildProcess child;
  child.pid_ = pid;
  CloseFd(in[0]);
  CloseFd(out[1]);
  CloseFd(err[1]);
  child.stdin_fd_ = in[1];
  child.stdout_fd_ = out[0];
  child.stderr_fd_ = err[0];
  for (int fd : {child.stdin_fd_, child.stdout_fd_, child.stderr_fd_}) {
    if (fd >= 0) ::fcntl(fd, F_SETFL, ::fcntl(fd, F_GETFL) | O_NONBLOCK);
  }
  return child;
}

ChildProcess::ChildProcess(ChildProcess&& other) noexcept {
  *this = std::move(other);
}

ChildProcess& ChildProcess::operator=(ChildProcess&& other) noexcept {
  if (this != &other) {
    Release();
    pid_ = std::exchange(other.pid_, -1);
    stdin_fd_ = std::exchange(other.stdin_fd_, -1);
    stdout_fd_ = std::exchange(other.stdout_fd_, -1);
    stderr_fd_ = std::exchange(other.stderr_fd_, -1);
    status_ = std::exchange(other.status_, std::nullopt);
  }
  return *this;
}

ChildProcess::~ChildProcess() {
  Release();
}

void ChildProcess::Release() {
  if (pid_ > 0 && !status_) {
    KillGroup(SIGKILL);
    Wait();
  }
  CloseFd(stdin_fd_);
  CloseFd(stdout_fd_);
  CloseFd(stderr_fd_);
  pid_ = -1;
}

void ChildProcess::CloseStdin() {
  CloseFd(stdin_fd_);
}

void ChildProcess::KillGroup(int signal) {
  // Only before reaping: afterwards the group id may belong to someone else.
  if (pid_ > 0 && !status_) ::kill(-pid_, signal);
}

ExitStatus ChildProcess::Wait() {
  while (!status_) {
    int status = 0;
    const pid_t r = ::waitpid(pid_, &status, 0);
    if (r == pid_) {
      status_ = FromWaitStatus(status);
      TellGroupKeeper(false, pid_);
    } else if (r < 0 && errno != EINTR) {
      throw std::system_error(errno, std::generic_category(), "waitpid");
    }
  }
  return *status_;
}

std::optional<ExitStatus> ChildProcess::TryWait() {
  if (!status_) {
    int status = 0;
    if (::waitpid(pid_, &status, WNOHANG) == pid_) {
      status_ = FromWaitStatus(status);
      TellGroupKeeper(false, pid_);
    }
  }
  return status_;
}

CommandResult RunCommand(const std::vector<std::string>& argv, std::chrono::milliseconds timeout,
                         const std::map<std::string, std::string>& env,
                         const CpuPriority& priority) {
  const auto start = Clock::now();
  const auto deadline = start + timeout;
  ChildProcess child = ChildProcess::Start(
      {.argv = argv, .env = env, .pipe_stdout = true, .pipe_stderr = true, .priority = priority});
  CommandResult result;
  // Negative fds are skipped by poll: a pipe at end of file stops being polled.
  pollfd fds[2] = {{child.stdout_fd(), POLLIN, 0}, {child.stderr_fd(), POLLIN, 0}};
  std::string* sinks[2] = {&result.out, &result.err};
  const auto drain = [&] {
    for (int i = 0; i < 2; ++i) {
      if (fds[i].fd >= 0 && !ReadAvailable(fds[i].fd, *sinks[i])) fds[i].fd = -1;
    }
  };
  // Read while the child runs; stop at its exit (not at end of file: a
  // grandchild left in the background may hold the pipes open) or deadline.
  while (!child.TryWait()) {
    const auto now = Clock::now();
    if (now >= deadline) {
      child.KillGroup(SIGKILL);
      child.Wait();
      result.timed_out = true;
      break;
    }
    const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - now);
    // Short polls: the child's exit is noticed by TryWait, not by the pipes.
    ::poll(fds, 2, static_cast<int>(std::min<int64_t>(left.count() + 1, 10)));
    drain();
  }
  drain();
  result.status = *child.TryWait();
  result.seconds = std::chrono::duration<double>(Clock::now() - start).count();
  return result;
}

}  // namespace tiletune::runtime
