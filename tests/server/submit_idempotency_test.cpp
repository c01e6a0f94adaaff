// SubmitJob's request_id on the real daemon: a call whose deadline expired
// may still have made its job (10 calls at 1 ms once made 7 jobs), so a
// client retries with the same request id and the daemon answers the job
// the first call made: one job however many calls, threads or daemons of a
// fleet carry the id, and never another job for another spec.
#include <gtest/gtest.h>
#include <signal.h>

#include <fstream>
#include <future>
#include <map>
#include <thread>
#include <vector>

#include "client/tiletune_client.h"
#include "tests/support/postgres_test_database.h"
#include "tests/support/tiletuned_process.h"

namespace tiletune::testing {
namespace {

using namespace std::chrono_literals;

v1::SubmitJobRequest Request(const std::string& request_id, int64_t cols = 100) {
  v1::SubmitJobRequest request;
  request.set_request_id(request_id);
  request.mutable_spec()->mutable_budget()->set_max_variants(1);
  *request.mutable_spec()->add_kernels() = RowKey("softmax", 8, cols);
  return request;
}

grpc::Status Submit(v1::TuningService::Stub& stub, const v1::SubmitJobRequest& request,
                    v1::SubmitJobResponse* response,
                    std::chrono::system_clock::duration deadline = 60s) {
  grpc::ClientContext ctx;
  ctx.set_deadline(std::chrono::system_clock::now() + deadline);
  return stub.SubmitJob(&ctx, request, response);
}

// Every job the daemon lists, by id.
std::map<std::string, v1::Job> ListJobs(v1::TuningService::Stub& stub) {
  std::map<std::string, v1::Job> jobs;
  grpc::ClientContext ctx;
  ctx.set_deadline(std::chrono::system_clock::now() + 60s);
  v1::ListJobsRequest request;
  request.set_page_size(1000);
  v1::ListJobsResponse response;
  const auto status = stub.ListJobs(&ctx, request, &response);
  EXPECT_TRUE(status.ok()) << status.error_message();
  EXPECT_TRUE(response.next_page_token().empty());
  for (const auto& job : response.jobs()) jobs[job.id()] = job;
  return jobs;
}

// Submits `request` from `threads` threads at once over stubs of their own
// (on `daemons` in turn); returns the job id each got.
std::vector<std::string> SubmitAtOnce(const std::vector<TiletunedProcess*>& daemons,
                                      const v1::SubmitJobRequest& request, int threads) {
  std::vector<std::string> ids(threads);
  std::promise<void> go;
  std::shared_future<void> started = go.get_future().share();
  std::vector<std::thread> workers;
  for (int t = 0; t < threads; ++t) {
    workers.emplace_back([&, t] {
      auto stub = daemons[t % daemons.size()]->Stub();
      started.wait();
      v1::SubmitJobResponse response;
      const auto status = Submit(*stub, request, &response);
      EXPECT_TRUE(status.ok()) << status.error_message();
      ids[t] = response.job_id();
    });
  }
  go.set_value();
  for (auto& worker : workers) worker.join();
  return ids;
}

TEST(SubmitIdempotency, TheSameRequestIdTwiceIsOneJobAndAnotherSpecIsRefused) {
  TempDir dir;
  TiletunedProcess daemon(dir.path(), {"--host-cpus", "1"});
  daemon.Start();
  auto stub = daemon.Stub();

  v1::SubmitJobResponse first, second;
  ASSERT_TRUE(Submit(*stub, Request("r-1"), &first).ok());
  EXPECT_FALSE(first.already_existed());
  EXPECT_EQ(first.job().request_id(), "r-1");
  ASSERT_TRUE(Submit(*stub, Request("r-1"), &second).ok());
  EXPECT_TRUE(second.already_existed());
  EXPECT_EQ(second.job_id(), first.job_id());
  EXPECT_EQ(second.job().id(), first.job_id());

  v1::SubmitJobResponse refused;
  auto status = Submit(*stub, Request("r-1", 200), &refused);
  EXPECT_EQ(status.error_code(), grpc::StatusCode::ALREADY_EXISTS);
  EXPECT_EQ(status.error_message(), "request_id: 'r-1' already made job " + first.job_id() +
                                        " with another spec; a new job needs a new request_id");

  // No request id: a new job each time.
  v1::SubmitJobResponse plain;
  ASSERT_TRUE(Submit(*stub, Request(""), &plain).ok());
  ASSERT_TRUE(Submit(*stub, Request(""), &plain).ok());
  EXPECT_EQ(ListJobs(*stub).size(), 3u);

  for (const auto& [bad, message] : std::vector<std::pair<std::string, std::string>>{
           {std::string(257, 'r'), "request_id: is 257 bytes; the limit is max_name_bytes 256"},
           {"two words", "request_id: byte 3 is a space or not printable ASCII"},
           {"line\n", "request_id: byte 4 is a space or not printable ASCII"},
           {"caf\xc3\xa9", "request_id: byte 3 is a space or not printable ASCII"}}) {
    status = Submit(*stub, Request(bad), &refused);
    EXPECT_EQ(status.error_code(), grpc::StatusCode::INVALID_ARGUMENT) << bad;
    EXPECT_EQ(status.error_message(), message);
  }
  ASSERT_TRUE(Submit(*stub, Request(std::string(256, 'r')), &plain).ok());
  EXPECT_EQ(ListJobs(*stub).size(), 4u);
  EXPECT_EQ(daemon.Stop(SIGTERM), 0);
}

TEST(SubmitIdempotency, ConcurrentSubmitsWithOneRequestIdMakeOneJob) {
  TempDir dir;
  TiletunedProcess daemon(dir.path(), {"--host-cpus", "1"});
  daemon.Start();
  const auto ids = SubmitAtOnce({&daemon}, Request("shared"), 8);
  for (const auto& id : ids) EXPECT_EQ(id, ids.front());
  const auto jobs = ListJobs(*daemon.Stub());
  ASSERT_EQ(jobs.size(), 1u);
  EXPECT_EQ(jobs.begin()->first, ids.front());
  EXPECT_EQ(daemon.Stop(SIGTERM), 0);
}

// The defect as found: calls at 1 ms end DEADLINE_EXCEEDED, yet many of them
// create their job. Retried with their ids, each makes exactly one.
TEST(SubmitIdempotency, ACallPastItsDeadlineRetriedWithItsIdMakesOneJob) {
  TempDir dir;
  TiletunedProcess daemon(dir.path(), {"--host-cpus", "1"});
  daemon.Start();
  auto stub = daemon.Stub();
  constexpr int kCalls = 10;
  std::map<std::string, std::string> job_of_request;
  for (int i = 0; i < kCalls; ++i) {
    const auto request = Request("late-" + std::to_string(i));
    v1::SubmitJobResponse response;
    Submit(*stub, request, &response, 1ms);  // may or may not make the job
    ASSERT_TRUE(Submit(*stub, request, &response).ok());
    job_of_request[request.request_id()] = response.job_id();
  }
  const auto jobs = ListJobs(*stub);
  EXPECT_EQ(jobs.size(), static_cast<std::size_t>(kCalls));
  for (const auto& [request_id, job_id] : job_of_request) {
    ASSERT_TRUE(jobs.contains(job_id)) << request_id;
    EXPECT_EQ(jobs.at(job_id).request_id(), request_id);
  }
  EXPECT_EQ(daemon.Stop(SIGTERM), 0);
}

// The client library's own retry: while the daemon is stopped (SIGSTOP) the
// attempts reach its socket but time out; once it runs again it reads them
// all, late ones included, and makes one job.
TEST(SubmitIdempotency, TheClientLibraryRetriesWithOneRequestIdUntilTheDaemonAnswers) {
  TempDir dir;
  TiletunedProcess daemon(dir.path(), {"--host-cpus", "1"});
  daemon.Start();
  std::promise<void> retried;
  client::ClientOptions options;
  options.submit_deadline = 300ms;
  options.submit_retry.max_attempts = 1000;
  options.submit_retry.initial_backoff = 10ms;
  options.submit_retry.max_backoff = 100ms;
  int retries = 0;
  options.submit_retry.on_retry = [&](const grpc::Status& failed, int next_attempt) {
    EXPECT_TRUE(failed.error_code() == grpc::StatusCode::DEADLINE_EXCEEDED ||
                failed.error_code() == grpc::StatusCode::UNAVAILABLE)
        << failed.error_message();
    EXPECT_EQ(next_attempt, retries + 2);
    if (++retries == 3) retried.set_value();
  };
  client::TiletuneClient client(daemon.address(), options);
  // Connected before the daemon stops, so that attempts reach its socket.
  ASSERT_EQ(client.Lookup(RowKey("softmax", 8, 100), {}, 60s).source,
            client::AnswerSource::kDaemon);

  ASSERT_EQ(kill(daemon.pid(), SIGSTOP), 0);
  auto submitted = std::async(std::launch::async, [&] {
    v1::SubmitJobResponse response;
    const auto status = client.SubmitJob(Request(""), &response);
    return std::pair{status, response};
  });
  const bool three_attempts_failed =
      retried.get_future().wait_for(60s) == std::future_status::ready;
  ASSERT_EQ(kill(daemon.pid(), SIGCONT), 0);
  ASSERT_TRUE(three_attempts_failed);
  const auto [status, response] = submitted.get();
  ASSERT_TRUE(status.ok()) << status.error_message();
  EXPECT_EQ(response.job().request_id().size(), 32u);  // a new 128-bit id in hex
  const auto jobs = ListJobs(*daemon.Stub());
  ASSERT_EQ(jobs.size(), 1u);
  EXPECT_EQ(jobs.begin()->first, response.job_id());

  // Each call without an id of its own is a job of its own.
  v1::SubmitJobResponse another;
  ASSERT_TRUE(client.SubmitJob(Request(""), &another).ok());
  EXPECT_NE(another.job_id(), response.job_id());
  EXPECT_NE(another.job().request_id(), response.job().request_id());
  EXPECT_EQ(daemon.Stop(SIGTERM), 0);
}

TEST(SubmitIdempotency, TheCliRequestIdTwiceIsOneJob) {
  TempDir dir;
  TiletunedProcess daemon(dir.path(), {"--host-cpus", "1"});
  daemon.Start();
  const auto spec = dir.path() / "job.yaml";
  std::ofstream(spec)
      << "budget: {max_variants: 1}\n"
         "kernels:\n  - op: softmax\n    dtype: f32\n    shape: {rows: 8, cols: 100}\n";
  auto submit = [&](const std::string& request_id) {
    return RunCommand({BinaryPath("tiletune"), "--server", daemon.address(), "submit",
                       spec.string(), "--request-id", request_id});
  };
  const auto first = submit("nightly-42");
  ASSERT_EQ(first.exit_code, 0) << first.err;
  const auto second = submit("nightly-42");
  ASSERT_EQ(second.exit_code, 0) << second.err;
  EXPECT_EQ(second.out, first.out);
  const std::string job_id = first.out.substr(0, first.out.find('\n'));
  EXPECT_EQ(second.err, "tiletune: request id nightly-42 already made job " + job_id +
                            "; nothing new was queued\n");
  ASSERT_EQ(ListJobs(*daemon.Stub()).size(), 1u);

  const auto bad = submit("two words");
  EXPECT_EQ(bad.exit_code, 2);
  EXPECT_NE(bad.err.find("request_id: byte 3"), std::string::npos) << bad.err;
  // Without --request-id each submit is a job of its own.
  for (int i = 0; i < 2; ++i) {
    const auto plain =
        RunCommand({BinaryPath("tiletune"), "--server", daemon.address(), "submit", spec.string()});
    ASSERT_EQ(plain.exit_code, 0) << plain.err;
  }
  EXPECT_EQ(ListJobs(*daemon.Stub()).size(), 3u);
  EXPECT_EQ(daemon.Stop(SIGTERM), 0);
}

// Two daemons sharing one PostgreSQL database, several threads on each, one
// request id: one job, answered by both.
TEST(SubmitIdempotency, OnPostgresTwoDaemonsGivenOneRequestIdMakeOneJob) {
  auto admin = PostgresAdminUrl();
  if (!admin) GTEST_SKIP() << kNoPostgresCluster;
  PostgresTestDatabase database(*admin);
  TempDir dir;
  std::vector<std::unique_ptr<TiletunedProcess>> daemons;
  for (const std::string id : {"a", "b"}) {
    std::filesystem::create_directories(dir.path() / id);
    daemons.push_back(std::make_unique<TiletunedProcess>(
        dir.path() / id,
        std::vector<std::string>{"--db", database.url(), "--daemon-id", id, "--host-cpus", "1"}));
    daemons.back()->Start();
  }
  const auto ids = SubmitAtOnce({daemons[0].get(), daemons[1].get()}, Request("fleet"), 8);
  for (const auto& id : ids) EXPECT_EQ(id, ids.front());
  EXPECT_EQ(database.Query("SELECT count(*) FROM jobs"), "1");
  EXPECT_EQ(database.Query("SELECT request_id FROM jobs"), "fleet");
  for (auto& daemon : daemons) EXPECT_EQ(daemon->Stop(SIGTERM), 0);
}

}  // namespace
}  // namespace tiletune::testing
