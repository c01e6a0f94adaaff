#include "tests/support/daemon_calls.h"

#include <gtest/gtest.h>

#include "tests/support/tiletuned_process.h"

namespace tiletune::testing {

std::string SubmitJob(v1::TuningService::Stub& stub, const v1::JobSpec& spec) {
  grpc::ClientContext ctx;
  v1::SubmitJobRequest request;
  *request.mutable_spec() = spec;
  v1::SubmitJobResponse response;
  const auto status = stub.SubmitJob(&ctx, request, &response);
  EXPECT_TRUE(status.ok()) << status.error_message();
  return response.job_id();
}

v1::Job GetJob(v1::TuningService::Stub& stub, const std::string& id) {
  grpc::ClientContext ctx;
  v1::GetJobRequest request;
  request.set_job_id(id);
  v1::Job job;
  const auto status = stub.GetJob(&ctx, request, &job);
  EXPECT_TRUE(status.ok()) << id << ": " << status.error_message();
  return job;
}

std::vector<v1::JobEvent> WatchJobToEnd(v1::TuningService::Stub& stub, const std::string& id) {
  grpc::ClientContext ctx;
  ctx.set_deadline(std::chrono::system_clock::now() + kEventCeiling);
  v1::WatchJobRequest request;
  request.set_job_id(id);
  auto reader = stub.WatchJob(&ctx, request);
  std::vector<v1::JobEvent> events;
  v1::JobEvent event;
  while (reader->Read(&event)) events.push_back(event);
  const auto status = reader->Finish();
  EXPECT_TRUE(status.ok()) << id << ": " << status.error_message();
  return events;
}

v1::LookupResponse Lookup(v1::TuningService::Stub& stub, const v1::LookupRequest& request) {
  grpc::ClientContext ctx;
  v1::LookupResponse response;
  const auto status = stub.Lookup(&ctx, request, &response);
  EXPECT_TRUE(status.ok()) << status.error_message();
  return response;
}

void CancelJob(v1::TuningService::Stub& stub, const std::string& id) {
  grpc::ClientContext ctx;
  v1::CancelJobRequest request;
  request.set_job_id(id);
  v1::Job cancelled;
  const auto status = stub.CancelJob(&ctx, request, &cancelled);
  EXPECT_TRUE(status.ok()) << id << ": " << status.error_message();
}

std::string OccupyDevice(v1::TuningService::Stub& stub) {
  v1::JobSpec spec;
  spec.set_name("occupy");
  spec.set_strategy(v1::STRATEGY_EXHAUSTIVE);
  spec.mutable_budget()->set_max_variants(200);
  spec.mutable_budget()->set_max_seconds(3600);
  *spec.add_kernels() = GemmKey(512, 512, 512);
  const std::string id = SubmitJob(stub, spec);
  WaitForJob(stub, id, [](const v1::Job& job) { return job.state() != v1::JOB_QUEUED; });
  return id;
}

bool JobFinished(const v1::Job& job) {
  return job.state() == v1::JOB_SUCCEEDED || job.state() == v1::JOB_FAILED ||
         job.state() == v1::JOB_CANCELLED;
}

v1::Job WaitForJob(v1::TuningService::Stub& stub, const std::string& id,
                   const std::function<bool(const v1::Job&)>& done, std::chrono::seconds ceiling) {
  v1::Job job;
  const bool reached = PollUntil(
      [&] {
        grpc::ClientContext ctx;
        v1::GetJobRequest request;
        request.set_job_id(id);
        return stub.GetJob(&ctx, request, &job).ok() && done(job);
      },
      In(ceiling), std::chrono::milliseconds(50));
  if (!reached) {
    ADD_FAILURE() << "job " << id
                  << " did not reach the expected state; last: " << job.ShortDebugString();
  }
  return job;
}

}  // namespace tiletune::testing
