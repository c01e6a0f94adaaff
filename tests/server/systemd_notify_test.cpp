#include "server/systemd_notify.h"

#include <gtest/gtest.h>
#include <stdlib.h>
#include <unistd.h>

#include "tests/support/notify_socket.h"
#include "tests/support/tiletuned_process.h"

namespace tiletune::server {
namespace {

using namespace std::chrono_literals;
using testing::NotifySocket;

// Sets an environment variable for one test.
class ScopedEnv {
 public:
  ScopedEnv(const char* name, const std::string& value) : name_(name) {
    setenv(name, value.c_str(), 1);
  }
  ~ScopedEnv() { unsetenv(name_); }

 private:
  const char* name_;
};

TEST(SystemdNotifier, SendsStatesToAPathSocket) {
  testing::TempDir dir;
  NotifySocket socket((dir.path() / "notify").string());
  ScopedEnv env("NOTIFY_SOCKET", socket.path());
  SystemdNotifier notifier;
  EXPECT_TRUE(notifier.active());
  EXPECT_TRUE(notifier.Notify("READY=1\nSTATUS=serving"));
  EXPECT_EQ(socket.Receive(2s), "READY=1\nSTATUS=serving");
  EXPECT_TRUE(notifier.Notify("STOPPING=1"));
  EXPECT_EQ(socket.Receive(2s), "STOPPING=1");
}

TEST(SystemdNotifier, SendsToAnAbstractSocket) {
  NotifySocket socket("@tiletune-notify-test-" + std::to_string(getpid()));
  ScopedEnv env("NOTIFY_SOCKET", socket.path());
  EXPECT_TRUE(SystemdNotifier().Notify("READY=1"));
  EXPECT_EQ(socket.Receive(2s), "READY=1");
}

TEST(SystemdNotifier, WithoutSystemdDoesNothingAndAMissingSocketFails) {
  unsetenv("NOTIFY_SOCKET");
  EXPECT_FALSE(SystemdNotifier().active());
  EXPECT_TRUE(SystemdNotifier().Notify("READY=1"));
  ScopedEnv env("NOTIFY_SOCKET", "/nonexistent/notify");
  EXPECT_FALSE(SystemdNotifier().Notify("READY=1"));
}

TEST(SystemdNotifier, WatchdogIsHalfTheIntervalAndOnlyForItsPid) {
  ScopedEnv usec("WATCHDOG_USEC", "4000000");
  {
    ScopedEnv pid("WATCHDOG_PID", std::to_string(getpid()));
    EXPECT_EQ(SystemdNotifier().watchdog_interval_us(), 2000000);
  }
  ScopedEnv other("WATCHDOG_PID", std::to_string(getpid() + 1));
  EXPECT_EQ(SystemdNotifier().watchdog_interval_us(), 0);
}

}  // namespace
}  // namespace tiletune::server
