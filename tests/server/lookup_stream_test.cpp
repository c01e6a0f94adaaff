// LookupStream on the real daemon: each answer is what Lookup gives for the
// same request, in the requests' order; a failed lookup fails alone; the
// stream is admitted (credentials) and counted as one call.
#include <gtest/gtest.h>
#include <signal.h>

#include <fstream>

#include <google/protobuf/util/message_differencer.h>

#include "client/channel.h"
#include "client/lookup_stream_client.h"
#include "tests/support/daemon_calls.h"
#include "tests/support/prometheus_scrape.h"
#include "tests/support/test_key.h"
#include "tests/support/tiletuned_process.h"

namespace tiletune::testing {
namespace {

v1::LookupRequest RequestFor(const v1::KernelKey& key) {
  v1::LookupRequest request;
  *request.mutable_key() = key;
  return request;
}

TEST(LookupStream, EachAnswerIsLookupsForTheSameRequestInOrder) {
  TempDir dir;
  TiletunedProcess daemon(dir.path(), {"--host-cpus", "1"});
  daemon.Start();
  auto stub = daemon.Stub();
  v1::JobSpec spec;
  spec.mutable_budget()->set_max_variants(1);
  *spec.add_kernels() = RowsTestKey("softmax", 8, 100);
  ASSERT_TRUE(JobFinished(WaitForJob(*stub, SubmitJob(*stub, spec))));

  v1::KernelKey bad = RowsTestKey("softmax", 8, 100);
  bad.set_op("no-such-op");
  const std::vector<v1::LookupRequest> requests = {
      RequestFor(RowsTestKey("softmax", 8, 100)),  // the tuned key
      RequestFor(bad),                             // refused, naming the field
      RequestFor(RowsTestKey("softmax", 8, 101)),  // never tuned: a MISS
      RequestFor(RowsTestKey("softmax", 8, 100)),
  };
  grpc::ClientContext ctx;
  auto stream = stub->LookupStream(&ctx);
  for (const auto& request : requests) ASSERT_TRUE(stream->Write(request));
  std::vector<v1::LookupStreamResponse> answers(requests.size());
  for (auto& answer : answers) ASSERT_TRUE(stream->Read(&answer));
  stream->WritesDone();
  v1::LookupStreamResponse extra;
  EXPECT_FALSE(stream->Read(&extra)) << "more answers than requests";
  const grpc::Status ended = stream->Finish();
  EXPECT_TRUE(ended.ok()) << ended.error_message();

  for (size_t i = 0; i < requests.size(); ++i) {
    grpc::ClientContext call;
    v1::LookupResponse expected;
    const grpc::Status status = stub->Lookup(&call, requests[i], &expected);
    EXPECT_EQ(answers[i].code(), status.error_code()) << i;
    EXPECT_EQ(answers[i].message(), status.error_message()) << i;
    EXPECT_TRUE(google::protobuf::util::MessageDifferencer::Equals(answers[i].response(), expected))
        << i << ":\n"
        << answers[i].response().DebugString() << "vs Lookup's\n"
        << expected.DebugString();
  }
  // Tuned or VENDOR, the key has a record now.
  EXPECT_TRUE(answers[0].response().has_record());
  EXPECT_EQ(answers[1].code(), grpc::StatusCode::INVALID_ARGUMENT);
  EXPECT_NE(answers[1].message().find("key.op"), std::string::npos) << answers[1].message();
  EXPECT_EQ(answers[2].response().result(), v1::LookupResponse::RESULT_MISS);

  // One call; its lookups counted as Lookup's are.
  const auto text = HttpGet(daemon.metrics_address(), "/metrics");
  ASSERT_TRUE(text);
  const Scrape scrape = ParseScrape(*text);
  EXPECT_EQ(
      scrape.Value("tiletune_grpc_requests_total", {{"method", "LookupStream"}, {"code", "ok"}}),
      "1")
      << *text;
  EXPECT_EQ(scrape.Value("tiletune_lookups_total", {{"result", "invalid"}}), "2") << *text;
  EXPECT_EQ(std::stod(scrape.Value("tiletune_lookups_total", {{"result", "hit"}})) +
                std::stod(scrape.Value("tiletune_lookups_total", {{"result", "miss"}})),
            6)
      << *text;
}

TEST(LookupStream, ClosedReadsRefuseAStreamWithoutACredential) {
  TempDir dir;
  std::filesystem::create_directories(dir.path() / "data");
  const auto tokens = dir.path() / "tokens";
  std::ofstream(tokens) << "bob tt-bob-5e1d0c9b8a7f6e5d4c3b\n";
  TiletunedProcess daemon(dir.path() / "data",
                          {"--auth-tokens-file", tokens.string(), "--auth-open-reads", "false"});
  daemon.Start();
  auto stub = daemon.Stub();
  auto ask = [&](const std::string& authorization, v1::LookupStreamResponse& answer) {
    grpc::ClientContext ctx;
    if (!authorization.empty()) ctx.AddMetadata("authorization", authorization);
    auto stream = stub->LookupStream(&ctx);
    stream->Write(RequestFor(RowsTestKey("softmax", 8, 64)));
    const bool answered = stream->Read(&answer);
    stream->WritesDone();
    const grpc::Status status = stream->Finish();
    EXPECT_EQ(answered, status.ok()) << status.error_message();
    return status;
  };
  v1::LookupStreamResponse answer;
  const grpc::Status refused = ask("", answer);
  EXPECT_EQ(refused.error_code(), grpc::StatusCode::UNAUTHENTICATED);
  EXPECT_NE(refused.error_message().find("LookupStream needs a credential"), std::string::npos)
      << refused.error_message();
  const grpc::Status admitted = ask("Bearer tt-bob-5e1d0c9b8a7f6e5d4c3b", answer);
  EXPECT_TRUE(admitted.ok()) << admitted.error_message();
  EXPECT_EQ(answer.code(), grpc::StatusCode::OK);
  EXPECT_EQ(answer.response().result(), v1::LookupResponse::RESULT_MISS);
}

TEST(LookupStream, TheClientLibraryGoesOnAfterABadKeyAndReopensAfterARestart) {
  using namespace std::chrono_literals;
  TempDir dir;
  // The socket's path outlives a restart (the TCP port does not).
  const std::string socket = (dir.path() / "tiletuned.sock").string();
  TiletunedProcess daemon(dir.path(), {"--listen-unix", socket});
  daemon.Start();
  client::LookupStreamClient lookups(client::MakeChannel("unix:" + socket), 30s);
  const v1::LookupRequest good = RequestFor(RowsTestKey("softmax", 8, 64));
  v1::KernelKey bad = RowsTestKey("softmax", 8, 64);
  bad.set_op("no-such-op");

  v1::LookupResponse response;
  grpc::Status status = lookups.Lookup(good, response);
  ASSERT_TRUE(status.ok()) << status.error_message();
  EXPECT_EQ(response.result(), v1::LookupResponse::RESULT_MISS);
  status = lookups.Lookup(RequestFor(bad), response);
  EXPECT_EQ(status.error_code(), grpc::StatusCode::INVALID_ARGUMENT);
  EXPECT_NE(status.error_message().find("key.op"), std::string::npos) << status.error_message();
  status = lookups.Lookup(good, response);
  EXPECT_TRUE(status.ok()) << "the stream should go on after one bad key: "
                           << status.error_message();

  EXPECT_EQ(daemon.Stop(SIGKILL), 128 + SIGKILL);
  const auto asked = std::chrono::steady_clock::now();
  status = lookups.Lookup(good, response, 2s);
  EXPECT_FALSE(status.ok());
  EXPECT_LT(std::chrono::steady_clock::now() - asked, 10s) << "the deadline was not kept";
  daemon.Start();
  EXPECT_TRUE(PollUntil([&] { return lookups.Lookup(good, response, 5s).ok(); }))
      << "no new stream after the restart";
  EXPECT_EQ(response.result(), v1::LookupResponse::RESULT_MISS);
}

}  // namespace
}  // namespace tiletune::testing
