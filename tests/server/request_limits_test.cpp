// Huge strings against the real daemon: names past max_name_bytes are
// refused naming the field and the limit, errors quote a short prefix of a
// bad value (a long one once made the answer itself fail or hang), and jobs
// and records stored with huge text (by an older daemon) never make a list
// call fail.
#include <gtest/gtest.h>
#include <signal.h>

#include <chrono>
#include <set>

#include "client/channel.h"
#include "db/tuning_store.h"
#include "tests/support/tiletuned_process.h"

namespace tiletune::testing {
namespace {

using namespace std::chrono_literals;

// What the daemon answered a Lookup (within 20 s: a hang shows as
// DEADLINE_EXCEEDED).
grpc::Status Lookup(v1::TuningService::Stub& stub, const v1::KernelKey& key,
                    const std::string& device = "") {
  grpc::ClientContext ctx;
  ctx.set_deadline(std::chrono::system_clock::now() + 20s);
  v1::LookupRequest request;
  *request.mutable_key() = key;
  request.mutable_device()->set_device(device);
  v1::LookupResponse response;
  return stub.Lookup(&ctx, request, &response);
}

v1::KernelKey WithOp(const std::string& op) {
  auto key = RowKey("softmax", 8, 100);
  key.set_op(op);
  return key;
}

CommandResult Cli(const TiletunedProcess& daemon, std::vector<std::string> args) {
  args.insert(args.begin(), {BinaryPath("tiletune"), "--server", daemon.address()});
  return RunCommand(args);
}

TEST(RequestLimits, NamesPastMaxNameBytesAreRefusedAndBadValuesQuotedShort) {
  TempDir dir;
  TiletunedProcess daemon(dir.path());
  daemon.Start();
  auto stub = daemon.Stub();

  for (std::size_t bytes : {8192, 66 * 1024}) {
    auto status = Lookup(*stub, WithOp(std::string(bytes, 'a')));
    EXPECT_EQ(status.error_code(), grpc::StatusCode::INVALID_ARGUMENT) << bytes;
    EXPECT_EQ(status.error_message(),
              "key.op: is " + std::to_string(bytes) + " bytes; the limit is max_name_bytes 256");
    auto key = RowKey("softmax", 8, 100);
    key.mutable_shape(0)->set_name(std::string(bytes, 'd'));
    status = Lookup(*stub, key);
    EXPECT_EQ(status.error_code(), grpc::StatusCode::INVALID_ARGUMENT) << bytes;
    EXPECT_EQ(status.error_message().rfind("key.shape[0].name: is ", 0), 0u);
    status = Lookup(*stub, RowKey("softmax", 8, 100), std::string(bytes, 'x'));
    EXPECT_EQ(status.error_code(), grpc::StatusCode::INVALID_ARGUMENT) << bytes;
    EXPECT_EQ(status.error_message(), "device.device: is " + std::to_string(bytes) +
                                          " bytes; the limit is max_name_bytes 256");
    // Values that are not names are quoted short.
    {
      grpc::ClientContext ctx;
      ctx.set_deadline(std::chrono::system_clock::now() + 20s);
      v1::GetJobRequest request;
      request.set_job_id(std::string(bytes, 'j'));
      v1::Job job;
      status = stub->GetJob(&ctx, request, &job);
      EXPECT_EQ(status.error_code(), grpc::StatusCode::NOT_FOUND) << bytes;
      EXPECT_EQ(status.error_message(), "job_id: no job '" + std::string(32, 'j') + "…' (" +
                                            std::to_string(bytes) + " bytes)");
    }
    {
      grpc::ClientContext ctx;
      ctx.set_deadline(std::chrono::system_clock::now() + 20s);
      v1::ListRecordsRequest request;
      request.set_op(std::string(bytes, 'o'));
      v1::ListRecordsResponse records;
      status = stub->ListRecords(&ctx, request, &records);
      EXPECT_EQ(status.error_code(), grpc::StatusCode::INVALID_ARGUMENT) << bytes;
      EXPECT_EQ(status.error_message(), "op: unknown op '" + std::string(32, 'o') + "…' (" +
                                            std::to_string(bytes) + " bytes)");
    }
  }

  // The CLI's exit code for bad input, not a failed call.
  auto cli = Cli(daemon, {"lookup", "--op", std::string(8192, 'a'), "--dtype", "f32", "--shape",
                          "rows=8,cols=100"});
  EXPECT_EQ(cli.exit_code, 2) << cli.err.substr(0, 300);
  EXPECT_NE(cli.err.find("max_name_bytes"), std::string::npos) << cli.err.substr(0, 300);

  // A job's name: refused past the limit, kept (and echoed) up to it.
  v1::SubmitJobRequest submit;
  submit.mutable_spec()->mutable_budget()->set_max_variants(1);
  *submit.mutable_spec()->add_kernels() = RowKey("softmax", 8, 100);
  submit.mutable_spec()->set_name(std::string(257, 'n'));
  v1::SubmitJobResponse submitted;
  {
    grpc::ClientContext ctx;
    auto status = stub->SubmitJob(&ctx, submit, &submitted);
    EXPECT_EQ(status.error_code(), grpc::StatusCode::INVALID_ARGUMENT);
    EXPECT_EQ(status.error_message(), "spec.name: is 257 bytes; the limit is max_name_bytes 256");
  }
  submit.mutable_spec()->set_name(std::string(256, 'n'));
  {
    grpc::ClientContext ctx;
    ASSERT_TRUE(stub->SubmitJob(&ctx, submit, &submitted).ok());
    EXPECT_EQ(submitted.job().spec().name(), std::string(256, 'n'));
  }
  EXPECT_EQ(daemon.Stop(SIGTERM), 0);
}

TEST(RequestLimits, ARaisedNameLimitStillQuotesAShortPrefix) {
  TempDir dir;
  TiletunedProcess daemon(dir.path(), {"--max-name-bytes", "1048576"});
  daemon.Start();
  auto stub = daemon.Stub();
  auto status = Lookup(*stub, WithOp(std::string(66 * 1024, 'a')));
  EXPECT_EQ(status.error_code(), grpc::StatusCode::INVALID_ARGUMENT);
  EXPECT_EQ(status.error_message().rfind(
                "key.op: unknown op '" + std::string(32, 'a') + "…' (67584 bytes) (known: ", 0),
            0u)
      << status.error_message().substr(0, 200);
  EXPECT_LT(status.error_message().size(), 300u);
  status = Lookup(*stub, RowKey("softmax", 8, 100), std::string(66 * 1024, 'x'));
  EXPECT_EQ(status.error_message().rfind("device.device: unknown device '" + std::string(32, 'x') +
                                             "…' (67584 bytes) (known: ",
                                         0),
            0u)
      << status.error_message().substr(0, 200);

  auto cli = Cli(daemon, {"lookup", "--op", std::string(8192, 'a'), "--dtype", "f32", "--shape",
                          "rows=8,cols=100"});
  EXPECT_EQ(cli.exit_code, 2) << cli.err.substr(0, 300);
  EXPECT_NE(cli.err.find("(8192 bytes)"), std::string::npos) << cli.err.substr(0, 300);
  EXPECT_EQ(daemon.Stop(SIGTERM), 0);
}

// A cancelled one-kernel job named `name`, stored as an older daemon could
// have, without today's limits.
v1::Job StoredJob(const std::string& id, std::string name, int64_t created_s) {
  v1::Job job;
  job.set_id(id);
  job.set_device("cpu:0");
  job.mutable_created_at()->set_seconds(created_s);
  job.mutable_spec()->set_name(std::move(name));
  *job.mutable_spec()->add_kernels() = RowKey("softmax", 8, 100);
  return job;
}

// Every page of ListJobs at `page_size`: the ids listed, in order, and the
// name each job came back with.
std::vector<std::pair<std::string, std::string>> AllJobs(v1::TuningService::Stub& stub,
                                                         int page_size) {
  std::vector<std::pair<std::string, std::string>> jobs;
  v1::ListJobsRequest request;
  request.set_page_size(page_size);
  do {
    grpc::ClientContext ctx;
    ctx.set_deadline(std::chrono::system_clock::now() + 60s);
    v1::ListJobsResponse page;
    auto status = stub.ListJobs(&ctx, request, &page);
    EXPECT_TRUE(status.ok()) << page_size << ": " << status.error_code() << " "
                             << status.error_message().substr(0, 200);
    if (!status.ok()) break;
    EXPECT_LE(page.ByteSizeLong(), std::size_t{16} << 20);
    EXPECT_GT(page.jobs_size(), 0);
    for (const auto& job : page.jobs()) jobs.emplace_back(job.id(), job.spec().name());
    request.set_page_token(page.next_page_token());
  } while (!request.page_token().empty());
  return jobs;
}

TEST(RequestLimits, JobsStoredWithHugeNamesDoNotBreakListJobs) {
  TempDir dir;
  TiletunedProcess daemon(dir.path());
  const std::string nine_mib(9 << 20, 'n');
  {
    auto store = db::OpenSqliteStore({daemon.db_path().string()});
    // Two that fit a 16 MiB message one at a time, one that fits none.
    for (const auto& job :
         {StoredJob("j-a", nine_mib, 100), StoredJob("j-b", nine_mib, 101),
          StoredJob("j-c", std::string(20 << 20, 'c'), 102), StoredJob("j-d", "small", 103)}) {
      store->CreateJob(job, {"softmax-" + job.id()});
      store->CancelJob(job.id());
    }
  }
  daemon.Start();
  // A client that takes what the daemon may send (the CLI's channel).
  auto stub = v1::TuningService::NewStub(client::MakeChannel(daemon.address()));
  for (int page_size : {0, 1, 2, 1000}) {
    const auto jobs = AllJobs(*stub, page_size);
    ASSERT_EQ(jobs.size(), 4u) << page_size;
    EXPECT_EQ(jobs[0], (std::pair<std::string, std::string>("j-d", "small")));
    EXPECT_EQ(jobs[1].first, "j-c");
    EXPECT_EQ(jobs[1].second, std::string(4096, 'c') + "…");
    EXPECT_EQ(jobs[2].first, "j-b");
    EXPECT_EQ(jobs[2].second, nine_mib);
    EXPECT_EQ(jobs[3].first, "j-a");
    EXPECT_EQ(jobs[3].second.size(), nine_mib.size());
  }
  auto cli = RunCommand({BinaryPath("tiletune"), "--server", daemon.address(), "jobs", "list"});
  EXPECT_EQ(cli.exit_code, 0) << cli.err.substr(0, 300);
  EXPECT_EQ(daemon.Stop(SIGTERM), 0);
}

TEST(RequestLimits, AJobOrRecordTooBigForOneMessageIsAnsweredCut) {
  TempDir dir;
  TiletunedProcess daemon(dir.path());
  const std::string cut = std::string(4096, 'x') + "…";
  {
    auto store = db::OpenSqliteStore({daemon.db_path().string()});
    store->CreateJob(StoredJob("huge", std::string(20 << 20, 'x'), 100), {"softmax-huge"});
    store->CancelJob("huge");
    v1::Record record;
    *record.mutable_key() = RowKey("softmax", 8, 100);
    record.set_device_class("some-class");
    record.set_winner(v1::WINNER_VENDOR);
    record.mutable_decision()->set_reason(std::string(20 << 20, 'x'));
    store->PutRecord("softmax|huge", record);
  }
  daemon.Start();
  auto stub = v1::TuningService::NewStub(client::MakeChannel(daemon.address()));
  {
    grpc::ClientContext ctx;
    v1::GetJobRequest request;
    request.set_job_id("huge");
    v1::Job job;
    const auto status = stub->GetJob(&ctx, request, &job);
    ASSERT_TRUE(status.ok()) << status.error_code() << " " << status.error_message().substr(0, 200);
    EXPECT_EQ(job.spec().name(), cut);
  }
  {
    grpc::ClientContext ctx;
    ctx.set_deadline(std::chrono::system_clock::now() + 60s);
    v1::WatchJobRequest request;
    request.set_job_id("huge");
    auto reader = stub->WatchJob(&ctx, request);
    std::vector<v1::JobEvent::Kind> kinds;
    v1::JobEvent event;
    while (reader->Read(&event)) {
      kinds.push_back(event.kind());
      EXPECT_EQ(event.job().spec().name(), cut);
    }
    const auto status = reader->Finish();
    ASSERT_TRUE(status.ok()) << status.error_code() << " " << status.error_message().substr(0, 200);
    EXPECT_EQ(kinds, (std::vector<v1::JobEvent::Kind>{v1::JobEvent::KIND_SNAPSHOT,
                                                      v1::JobEvent::KIND_JOB_FINISHED}));
  }
  {
    grpc::ClientContext ctx;
    ctx.set_deadline(std::chrono::system_clock::now() + 60s);
    auto reader = stub->ExportRecords(&ctx, {});
    std::vector<std::string> reasons;
    v1::ExportLine line;
    while (reader->Read(&line)) reasons.push_back(line.record().decision().reason());
    const auto status = reader->Finish();
    ASSERT_TRUE(status.ok()) << status.error_code() << " " << status.error_message().substr(0, 200);
    EXPECT_EQ(reasons, std::vector<std::string>{cut});
  }
  EXPECT_EQ(daemon.Stop(SIGTERM), 0);
}

TEST(RequestLimits, RecordsStoredWithHugeTextDoNotBreakListRecords) {
  TempDir dir;
  TiletunedProcess daemon(dir.path());
  {
    auto store = db::OpenSqliteStore({daemon.db_path().string()});
    for (int i = 0; i < 3; ++i) {
      v1::Record record;
      *record.mutable_key() = RowKey("softmax", 8, 100 + i);
      record.set_device_class("some-class");
      record.set_winner(v1::WINNER_VENDOR);
      // The last one alone passes a 16 MiB message.
      record.mutable_decision()->set_reason(std::string(i < 2 ? 9 << 20 : 20 << 20, 'r'));
      store->PutRecord("softmax|" + std::to_string(i), record);
    }
  }
  daemon.Start();
  auto stub = v1::TuningService::NewStub(client::MakeChannel(daemon.address()));
  for (int page_size : {0, 1, 1000}) {
    std::vector<std::size_t> reasons;
    v1::ListRecordsRequest request;
    request.set_page_size(page_size);
    do {
      grpc::ClientContext ctx;
      ctx.set_deadline(std::chrono::system_clock::now() + 60s);
      v1::ListRecordsResponse page;
      auto status = stub->ListRecords(&ctx, request, &page);
      ASSERT_TRUE(status.ok()) << page_size << ": " << status.error_message().substr(0, 200);
      ASSERT_EQ(page.records_size(), page.staleness_size());
      for (const auto& r : page.records()) reasons.push_back(r.decision().reason().size());
      request.set_page_token(page.next_page_token());
    } while (!request.page_token().empty());
    EXPECT_EQ(reasons, (std::vector<std::size_t>{9 << 20, 9 << 20, 4096 + 3})) << page_size;
  }
  auto cli = RunCommand({BinaryPath("tiletune"), "--server", daemon.address(), "records", "list"});
  EXPECT_EQ(cli.exit_code, 0) << cli.err.substr(0, 300);
  EXPECT_EQ(daemon.Stop(SIGTERM), 0);
}

}  // namespace
}  // namespace tiletune::testing
