// The daemon's ceilings on how long a call may run (max_request_seconds,
// max_stream_seconds) on the real daemon over 127.0.0.1: they cut calls
// whose client set no deadline or a later one, a shorter client deadline
// still wins, and the CLI's watch carries on past the stream ceiling.
#include <gtest/gtest.h>

#include <thread>

#include "db/tuning_store.h"
#include "tests/support/poll_until.h"
#include "tests/support/prometheus_scrape.h"
#include "tests/support/tiletuned_process.h"

namespace tiletune::testing {
namespace {

using namespace std::chrono_literals;

double SecondsSince(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

// A job that keeps the device busy for far longer than any test here.
std::string SubmitBusyJob(v1::TuningService::Stub& stub) {
  v1::SubmitJobRequest request;
  request.mutable_spec()->mutable_budget()->set_max_variants(200);
  request.mutable_spec()->mutable_budget()->set_max_seconds(3600);
  *request.mutable_spec()->add_kernels() = RowKey("softmax", 4096, 4096);
  grpc::ClientContext ctx;
  v1::SubmitJobResponse response;
  auto status = stub.SubmitJob(&ctx, request, &response);
  EXPECT_TRUE(status.ok()) << status.error_message();
  return response.job_id();
}

// WatchJob calls the daemon has answered, whatever their status, from its
// /metrics (the latency histogram counts every call once it ends).
double WatchCallsEnded(const TiletunedProcess& daemon) {
  const auto metrics = HttpGet(daemon.metrics_address(), "/metrics");
  EXPECT_TRUE(metrics);
  const std::string count =
      ParseScrape(metrics.value_or(""))
          .Value("tiletune_grpc_request_duration_seconds_count", {{"method", "WatchJob"}});
  return count.empty() ? 0 : std::stod(count);
}

// Watches `job_id` until the stream ends; `deadline` 0: none.
grpc::Status Watch(v1::TuningService::Stub& stub, const std::string& job_id,
                   std::chrono::milliseconds deadline) {
  grpc::ClientContext ctx;
  if (deadline.count() > 0) ctx.set_deadline(std::chrono::system_clock::now() + deadline);
  v1::WatchJobRequest request;
  request.set_job_id(job_id);
  auto stream = stub.WatchJob(&ctx, request);
  v1::JobEvent event;
  while (stream->Read(&event)) {
  }
  return stream->Finish();
}

TEST(CallDeadlines, WatchEndsAtTheStreamCeilingUnlessTheClientsDeadlineComesFirst) {
  TempDir dir;
  TiletunedProcess daemon(dir.path(), {"--max-stream-seconds", "1.5"});
  daemon.Start();
  auto stub = daemon.Stub();
  const std::string id = SubmitBusyJob(*stub);

  for (auto client_deadline : {0ms, 30000ms}) {
    const auto started = std::chrono::steady_clock::now();
    const auto status = Watch(*stub, id, client_deadline);
    const double took = SecondsSince(started);
    EXPECT_EQ(status.error_code(), grpc::StatusCode::DEADLINE_EXCEEDED) << status.error_message();
    EXPECT_NE(status.error_message().find(
                  "WatchJob: ran past the daemon's limit (max_stream_seconds=1.5)"),
              std::string::npos)
        << status.error_message();
    EXPECT_GE(took, 1.4) << "client deadline " << client_deadline.count() << " ms";
  }

  const auto status = Watch(*stub, id, 300ms);
  EXPECT_EQ(status.error_code(), grpc::StatusCode::DEADLINE_EXCEEDED);
  EXPECT_EQ(status.error_message().find("daemon's limit"), std::string::npos)
      << "the client's earlier deadline must win: " << status.error_message();

  // The CLI watches on past the ceiling until the job ends (here: cancelled
  // once the daemon has ended the CLI's first watch, the fourth).
  EXPECT_TRUE(PollUntil([&] { return WatchCallsEnded(daemon) == 3; }, In(kEventCeiling), 50ms));
  std::thread canceller([&] {
    EXPECT_TRUE(PollUntil([&] { return WatchCallsEnded(daemon) == 4; }, In(kEventCeiling), 50ms));
    grpc::ClientContext ctx;
    v1::CancelJobRequest request;
    request.set_job_id(id);
    v1::Job job;
    EXPECT_TRUE(daemon.Stub()->CancelJob(&ctx, request, &job).ok());
  });
  auto watched = RunCommand(
      {BinaryPath("tiletune"), "--server", daemon.address(), "--json", "jobs", "watch", id});
  canceller.join();
  EXPECT_EQ(watched.exit_code, 5) << watched.err;  // the watched job ended CANCELLED
  int snapshots = 0;
  for (size_t at = 0; (at = watched.out.find("KIND_SNAPSHOT", at)) != std::string::npos; ++at) {
    ++snapshots;
  }
  EXPECT_GE(snapshots, 2) << "the watch did not resume after the daemon ended it:\n" << watched.out;
}

TEST(CallDeadlines, LongUnaryCallsAndExportsEndAtTheirCeilings) {
  TempDir dir;
  {
    // One record to export, in the file the daemon opens.
    auto store = db::OpenSqliteStore({(dir.path() / "tiletune.db").string()});
    v1::Record record;
    *record.mutable_key() = RowKey("softmax", 8, 100);
    record.set_device_class("cls-a");
    store->PutRecord("softmax seeded", record);
  }
  TiletunedProcess daemon(
      dir.path(), {"--max-request-seconds", "0.000001", "--max-stream-seconds", "0.000001"});
  daemon.Start();
  auto stub = daemon.Stub();

  {
    grpc::ClientContext ctx;
    v1::BatchLookupRequest request;
    for (int i = 0; i < 10; ++i)
      *request.add_requests()->mutable_key() = RowKey("softmax", 8, i + 1);
    v1::BatchLookupResponse response;
    const auto status = stub->BatchLookup(&ctx, request, &response);
    EXPECT_EQ(status.error_code(), grpc::StatusCode::DEADLINE_EXCEEDED);
    EXPECT_NE(status.error_message().find(
                  "BatchLookup: ran past the daemon's limit (max_request_seconds=1e-06)"),
              std::string::npos)
        << status.error_message();
    EXPECT_EQ(response.responses_size(), 0);
  }
  {
    grpc::ClientContext ctx;
    v1::ListRecordsResponse response;
    const auto status = stub->ListRecords(&ctx, {}, &response);
    EXPECT_EQ(status.error_code(), grpc::StatusCode::DEADLINE_EXCEEDED);
    EXPECT_NE(status.error_message().find("ListRecords: ran past"), std::string::npos);
  }
  {
    grpc::ClientContext ctx;
    v1::ListJobsResponse response;
    EXPECT_EQ(stub->ListJobs(&ctx, {}, &response).error_code(),
              grpc::StatusCode::DEADLINE_EXCEEDED);
  }
  {
    grpc::ClientContext ctx;
    auto stream = stub->ExportRecords(&ctx, {});
    v1::ExportLine line;
    int lines = 0;
    while (stream->Read(&line)) ++lines;
    const auto status = stream->Finish();
    EXPECT_EQ(status.error_code(), grpc::StatusCode::DEADLINE_EXCEEDED);
    EXPECT_NE(status.error_message().find(
                  "ExportRecords: ran past the daemon's limit (max_stream_seconds=1e-06)"),
              std::string::npos)
        << status.error_message();
    EXPECT_EQ(lines, 0);
  }
  // A single lookup answers from memory and is not cut.
  grpc::ClientContext ctx;
  v1::LookupRequest request;
  *request.mutable_key() = RowKey("softmax", 8, 100);
  v1::LookupResponse response;
  EXPECT_TRUE(stub->Lookup(&ctx, request, &response).ok());
}

}  // namespace
}  // namespace tiletune::testing
