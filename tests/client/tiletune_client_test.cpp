#include "client/tiletune_client.h"

#include <gtest/gtest.h>

#include "loopback_ports.h"

namespace tiletune::client {
namespace {

using std::chrono::milliseconds;
using testing::LoopbackPort;

v1::KernelKey GemmKey() {
  v1::KernelKey key;
  key.set_op("gemm");
  key.set_input_dtype(v1::DTYPE_F32);
  auto* m = key.add_shape();
  m->set_name("m");
  m->set_size(128);
  return key;
}

void ExpectFallback(const LookupAnswer& answer, const std::string& address) {
  EXPECT_EQ(answer.source, AnswerSource::kFallback);
  EXPECT_FALSE(answer.status.ok());
  EXPECT_EQ(answer.response.result(), v1::LookupResponse::RESULT_MISS);
  EXPECT_EQ(answer.response.fallback().library(), "vendor");
  std::string prefix = "tiletuned unavailable at " + address + ": ";
  EXPECT_EQ(answer.response.fallback().reason().rfind(prefix, 0), 0u)
      << answer.response.fallback().reason();
  EXPECT_GT(answer.response.fallback().reason().size(), prefix.size());
}

TEST(TiletuneClientTest, RefusedConnectionAnswersFallbackAtOnce) {
  LoopbackPort port(LoopbackPort::Mode::kRefusing);
  // A deadline far off: UNAVAILABLE, not DEADLINE_EXCEEDED, says the answer
  // did not wait for it.
  TiletuneClient client(port.address(), {.deadline = std::chrono::minutes(5)});
  LookupAnswer answer = client.Lookup(GemmKey());
  EXPECT_EQ(answer.status.error_code(), grpc::StatusCode::UNAVAILABLE);
  ExpectFallback(answer, port.address());
  EXPECT_EQ(answer.status.error_code(), grpc::StatusCode::UNAVAILABLE);
}

TEST(TiletuneClientTest, SilentDaemonAnswersFallbackWhenTheDeadlinePasses) {
  LoopbackPort port(LoopbackPort::Mode::kSilent);
  ClientOptions options;
  options.deadline = milliseconds(100);
  TiletuneClient client(port.address(), options);
  auto started = std::chrono::steady_clock::now();
  LookupAnswer answer = client.Lookup(GemmKey());
  auto elapsed = std::chrono::steady_clock::now() - started;
  EXPECT_GE(elapsed, milliseconds(90));
  // DEADLINE_EXCEEDED says the deadline ended the call; the bound only
  // catches a call that hangs on past it.
  EXPECT_LT(elapsed, std::chrono::seconds(60));
  ExpectFallback(answer, port.address());
  EXPECT_EQ(answer.status.error_code(), grpc::StatusCode::DEADLINE_EXCEEDED);

  // A per-call deadline overrides the default.
  started = std::chrono::steady_clock::now();
  answer = client.Lookup(GemmKey(), {}, milliseconds(300));
  EXPECT_GE(std::chrono::steady_clock::now() - started, milliseconds(290));
  EXPECT_EQ(answer.source, AnswerSource::kFallback);
}

TEST(TiletuneClientTest, FallbacksAreNotCached) {
  LoopbackPort port(LoopbackPort::Mode::kRefusing);
  TiletuneClient client(port.address());
  EXPECT_EQ(client.Lookup(GemmKey()).source, AnswerSource::kFallback);
  EXPECT_EQ(client.Lookup(GemmKey()).source, AnswerSource::kFallback);
}

TEST(TiletuneClientTest, BatchLookupFallsBackForEveryRequestInOrder) {
  LoopbackPort port(LoopbackPort::Mode::kRefusing);
  TiletuneClient client(port.address());
  std::vector<v1::LookupRequest> requests(3);
  for (auto& r : requests) *r.mutable_key() = GemmKey();
  requests[1].mutable_device()->set_device("cpu:0");
  auto answers = client.BatchLookup(requests);
  ASSERT_EQ(answers.size(), 3u);
  for (const auto& answer : answers) ExpectFallback(answer, port.address());
  EXPECT_TRUE(client.BatchLookup({}).empty());
}

}  // namespace
}  // namespace tiletune::client
