#include "runtime/subprocess.h"

#include <gtest/gtest.h>
#include <signal.h>
#include <sys/resource.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <filesystem>
#include <fstream>
#include <thread>

namespace tiletune::runtime {
namespace {

using namespace std::chrono_literals;

TEST(Subprocess, CapturesOutputAndExitCode) {
  const CommandResult r = RunCommand({"sh", "-c", "echo out; echo err >&2; exit 3"}, 10s);
  EXPECT_FALSE(r.timed_out);
  EXPECT_TRUE(r.status.exited);
  EXPECT_EQ(r.status.code, 3);
  EXPECT_EQ(r.status.ToString(), "exit code 3");
  EXPECT_EQ(r.out, "out\n");
  EXPECT_EQ(r.err, "err\n");
}

TEST(Subprocess, ReportsTheKillingSignal) {
  const CommandResult r = RunCommand({"sh", "-c", "kill -SEGV $$"}, 10s);
  EXPECT_FALSE(r.status.exited);
  EXPECT_EQ(r.status.signal, SIGSEGV);
  EXPECT_EQ(r.status.ToString(), "killed by SIGSEGV");
  EXPECT_EQ(SignalName(SIGKILL), "SIGKILL");
}

TEST(Subprocess, TimeoutKillsTheCommandWithinTheDeadline) {
  const auto start = std::chrono::steady_clock::now();
  const CommandResult r = RunCommand({"sleep", "100"}, 300ms);
  const auto elapsed = std::chrono::steady_clock::now() - start;
  EXPECT_TRUE(r.timed_out);
  EXPECT_EQ(r.status.signal, SIGKILL);
  EXPECT_GE(elapsed, 300ms);
  // Killed, not ended on its own after 100 s; only a hang comes near this.
  EXPECT_LT(elapsed, 60s);
}

// A process that no longer runs: gone, or a zombie waiting for its reaper.
bool Ended(pid_t pid) {
  std::ifstream stat("/proc/" + std::to_string(pid) + "/stat");
  std::string pid_field, name, state;
  return !(stat >> pid_field >> name >> state) || state == "Z";
}

TEST(Subprocess, TimeoutKillsTheWholeProcessGroup) {
  // The shell starts a background sleep and prints its pid before waiting.
  const CommandResult r = RunCommand({"sh", "-c", "sleep 100 & echo $!; wait"}, 500ms);
  ASSERT_TRUE(r.timed_out);
  const pid_t grandchild = std::stoi(r.out);
  // Well before the sleep's own 100 s; only a hang comes near this.
  const auto deadline = std::chrono::steady_clock::now() + 60s;
  while (!Ended(grandchild) && std::chrono::steady_clock::now() < deadline) {
    std::this_thread::sleep_for(10ms);
  }
  EXPECT_TRUE(Ended(grandchild)) << "background sleep " << grandchild << " survived";
}

TEST(Subprocess, PassesEnvironmentOverrides) {
  const CommandResult r =
      RunCommand({"sh", "-c", "echo $TILETUNE_TEST_VALUE"}, 10s, {{"TILETUNE_TEST_VALUE", "42"}});
  EXPECT_EQ(r.out, "42\n");
}

// The group gets the niceness, and what it starts inherits it (a compiler
// driver's cc1plus). The sleep lets the parent set it before the child asks.
TEST(Subprocess, NicenessAppliesToTheChildAndWhatItStarts) {
  errno = 0;
  const int base = ::getpriority(PRIO_PROCESS, 0);
  ASSERT_EQ(errno, 0);
  const int expected = std::min(base + 7, 19);
  const CommandResult r =
      RunCommand({"sh", "-c", "sleep 0.2; nice; sh -c nice"}, 10s, {}, {.niceness = 7});
  EXPECT_EQ(r.out, std::to_string(expected) + "\n" + std::to_string(expected) + "\n") << r.err;
  EXPECT_EQ(RunCommand({"nice"}, 10s).out, std::to_string(base) + "\n");
}

// The child gets the policy, and what it starts inherits it. The sleep
// lets the parent set it before the child asks. Field 41 of /proc/PID/stat
// is the policy: 0 SCHED_OTHER, 3 SCHED_BATCH, 5 SCHED_IDLE.
TEST(Subprocess, SchedPolicyAppliesToTheChildAndWhatItStarts) {
  const std::string show =
      R"(sleep 0.2; awk '{print $41}' /proc/$$/stat; sh -c "awk '{print \$41}' /proc/\$\$/stat")";
  EXPECT_EQ(RunCommand({"sh", "-c", show}, 10s, {}, {.policy = SchedPolicy::kIdle}).out, "5\n5\n");
  EXPECT_EQ(RunCommand({"sh", "-c", show}, 10s, {}, {.policy = SchedPolicy::kBatch}).out, "3\n3\n");
  EXPECT_EQ(RunCommand({"sh", "-c", show}, 10s).out, "0\n0\n");
}

TEST(Subprocess, MissingProgramThrowsNamingIt) {
  try {
    RunCommand({"/nonexistent/tiletune-no-such-program"}, 1s);
    FAIL() << "expected std::system_error";
  } catch (const std::system_error& e) {
    EXPECT_NE(std::string(e.what()).find("tiletune-no-such-program"), std::string::npos);
  }
}

TEST(Subprocess, ChildProcessTalksThroughPipes) {
  ChildProcess child =
      ChildProcess::Start({.argv = {"cat"}, .pipe_stdin = true, .pipe_stdout = true});
  ASSERT_EQ(::write(child.stdin_fd(), "hello", 5), 5);
  child.CloseStdin();
  EXPECT_TRUE(child.Wait().success());
  char buf[16] = {};
  EXPECT_EQ(::read(child.stdout_fd(), buf, sizeof buf), 5);
  EXPECT_STREQ(buf, "hello");
}

TEST(Subprocess, DestroyingARunningChildKillsIt) {
  pid_t pid = 0;
  {
    ChildProcess child = ChildProcess::Start({.argv = {"sleep", "100"}});
    pid = child.pid();
  }
  // Reaped by the destructor: the pid no longer exists at all.
  EXPECT_EQ(::kill(pid, 0), -1);
}

}  // namespace
}  // namespace tiletune::runtime
