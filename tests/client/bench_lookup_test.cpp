// tiletune-bench-lookup refuses to load anything but this machine.
#include "bench/service/local_address.h"

#include <gtest/gtest.h>

#include "loopback_ports.h"
#include "process_runner.h"

namespace tiletune::bench {
namespace {

const std::string kBench = std::string(TILETUNE_BUILD_DIR) + "/bin/tiletune-bench-lookup";

TEST(LocalAddressTest, AcceptsOnlyLoopbackHostsAndUnixSockets) {
  for (const char* address :
       {"127.0.0.1:7733", "127.255.0.9:1", "localhost:7733", "[::1]:7733", "dns:///localhost:7733",
        "ipv4:127.0.0.1:7733", "ipv6:[::1]:7733", "unix:/tmp/tiletuned.sock"}) {
    EXPECT_TRUE(IsLocalAddress(address)) << address;
  }
  for (const char* address :
       {"10.0.0.1:7733", "128.0.0.1:7733", "0.0.0.0:7733", "[::]:7733", "[::2]:7733",
        "example.com:7733", "localhost.example.com:7733", "127.0.0.1",
        "127.0.0.1:", "127.0.0.1:77x", "::1:7733", "unix:", "dns:///10.0.0.1:7733"}) {
    EXPECT_FALSE(IsLocalAddress(address)) << address;
  }
}

TEST(BenchLookupTest, RefusesARemoteServer) {
  auto r = testing::RunProcess({kBench, "--server", "10.0.0.1:7733", "--seconds", "1"});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("is not a loopback address"), std::string::npos) << r.err;
  EXPECT_TRUE(r.out.empty());
}

TEST(BenchLookupTest, ReportsAnUnreachableDaemon) {
  testing::LoopbackPort port(testing::LoopbackPort::Mode::kRefusing);
  auto r = testing::RunProcess({kBench, "--server", port.address(), "--seconds", "1"});
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_NE(r.err.find("cannot get keys from tiletuned at " + port.address()), std::string::npos)
      << r.err;
}

}  // namespace
}  // namespace tiletune::bench
