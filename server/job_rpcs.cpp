// SubmitJob, GetJob, ListJobs, CancelJob, WatchJob and ListTrials: the job queue as
// clients see it. Past the admission gate each reads or writes jobs in the
// store, creates them through CreateJob, and tells the scheduler and the
// event hub what changed.
#include <algorithm>
#include <chrono>
#include <memory>
#include <set>
#include <string>
#include <vector>

#include <spdlog/spdlog.h>

#include "kernels/core/kernel_key.h"
#include "runtime/device_class.h"
#include "server/fleet_view.h"
#include "server/import_verification.h"
#include "server/job_creation.h"
#include "server/job_scheduler.h"
#include "server/page_filler.h"
#include "server/request_validation.h"
#include "server/tuning_service.h"

namespace tiletune::server {
namespace {

bool IsActive(v1::JobState state) {
  return state == v1::JOB_QUEUED || state == v1::JOB_RUNNING;
}

// The job as an answer carries it: cut to fit one message (CutToFit).
grpc::Status LoadJob(const ServiceContext& ctx, const std::string& job_id, v1::Job& job) {
  if (job_id.empty()) return InvalidArgument({"job_id", "is required"});
  auto found = ctx.store->GetJob(job_id);
  if (!found) return {grpc::StatusCode::NOT_FOUND, "job_id: no job " + kernels::Quoted(job_id)};
  job = std::move(*found);
  CutToFit(ctx.config, {&job});
  return grpc::Status::OK;
}

// The device class a job's items are measured on: the queue itself in fleet
// mode, else the class of the local device it names (empty when none).
std::string QueueDeviceClass(const ServiceContext& ctx, const std::string& queue) {
  if (ctx.devices.queues() == JobQueues::kPerDeviceClass) return queue;
  const ManagedDevice* device = ctx.devices.Find(queue);
  return device ? runtime::DeviceClassId(device->info.fingerprint) : std::string();
}

}  // namespace

grpc::Status TuningServiceImpl::SubmitJob(grpc::ServerContext* ctx,
                                          const v1::SubmitJobRequest* request,
                                          v1::SubmitJobResponse* response) {
  constexpr CallPolicy kPolicy{.method = "SubmitJob",
                               .access = Access::kMutate,
                               .needs_database = true,
                               .creates_jobs = true};
  return admission_.Run(*ctx, kPolicy, [&](const AdmittedCall& call) -> grpc::Status {
    std::set<std::string> fleet_classes;
    if (ctx_.devices.queues() == JobQueues::kPerDeviceClass) {
      fleet_classes =
          ServedDeviceClasses(ListFleet(*ctx_.store, ctx_.config.fleet_gone_after_seconds));
    }
    if (auto e = ValidateJobSpec(request->spec(), ctx_.config, ctx_.devices, fleet_classes)) {
      return InvalidArgument(*e);
    }
    if (auto e = ValidateRequestId(request->request_id(), ctx_.config.key_limits)) {
      return InvalidArgument(*e);
    }
    auto device = std::get<ResolvedDevice>(ResolveDevice(request->spec().device(), ctx_.devices,
                                                         ctx_.config.key_limits, "spec.device"));
    // No local device: a class only other daemons of the fleet have.
    const std::string queue = device.device ? device.device->queue : device.device_class;
    // The caps are checked where the job is stored, so that daemons sharing
    // a database cannot pass them together.
    const auto created =
        CreateJob(ctx_, request->spec(), queue, {call.caller.identity, request->request_id()},
                  {.max_active = ctx_.config.max_queued_jobs,
                   .max_active_submitted = ctx_.config.max_queued_jobs_per_client});
    using Outcome = db::JobAdmissionResult::Outcome;
    if (created.outcome == Outcome::kRequestIdTaken) {
      return {grpc::StatusCode::ALREADY_EXISTS,
              "request_id: " + kernels::Quoted(request->request_id()) + " already made job " +
                  created.job_id + " with another spec; a new job needs a new request_id"};
    }
    if (created.outcome == Outcome::kTooManyActive) {
      return {grpc::StatusCode::RESOURCE_EXHAUSTED,
              "job queue is full (" + std::to_string(created.active) +
                  " queued or running; max_queued_jobs=" +
                  std::to_string(ctx_.config.max_queued_jobs) + ")"};
    }
    if (created.outcome == Outcome::kTooManySubmitted) {
      return {grpc::StatusCode::RESOURCE_EXHAUSTED,
              "'" + call.caller.identity + "' already has " + std::to_string(created.active) +
                  " jobs queued or running; max_queued_jobs_per_client=" +
                  std::to_string(ctx_.config.max_queued_jobs_per_client)};
    }
    const std::string& id = created.job_id;
    const bool already_existed = created.outcome == Outcome::kAlreadyExists;
    // "caller=X: submitted" is what operators grep for; the request id follows.
    spdlog::info("job={} request={} peer={} caller={}: {}{}", id, RequestId(*ctx), ctx->peer(),
                 call.caller.identity,
                 already_existed ? "submitted again, answered with the job it made" : "submitted",
                 request->request_id().empty()
                     ? ""
                     : " (request_id " + kernels::Quoted(request->request_id()) + ")");
    response->set_job_id(id);
    response->set_already_existed(already_existed);
    return LoadJob(ctx_, id, *response->mutable_job());
  });
}

grpc::Status TuningServiceImpl::GetJob(grpc::ServerContext* ctx, const v1::GetJobRequest* request,
                                       v1::Job* response) {
  constexpr CallPolicy kPolicy{.method = "GetJob", .needs_database = true};
  return admission_.Run(*ctx, kPolicy, [&](const AdmittedCall&) {
    return LoadJob(ctx_, request->job_id(), *response);
  });
}

grpc::Status TuningServiceImpl::ListJobs(grpc::ServerContext* ctx,
                                         const v1::ListJobsRequest* request,
                                         v1::ListJobsResponse* response) {
  constexpr CallPolicy kPolicy{
      .method = "ListJobs", .ceiling = CallCeiling::kRequest, .needs_database = true};
  return admission_.Run(*ctx, kPolicy, [&](const AdmittedCall& call) -> grpc::Status {
    auto size = PageSize(request->page_size(), ctx_.config.max_page_size);
    if (auto* e = std::get_if<kernels::FieldError>(&size)) return InvalidArgument(*e);
    std::vector<v1::JobState> states;
    for (int i = 0; i < request->states_size(); ++i) {
      const auto state = static_cast<v1::JobState>(request->states(i));
      if (!v1::JobState_IsValid(state) || state == v1::JOB_STATE_UNSPECIFIED) {
        return InvalidArgument({"states[" + std::to_string(i) + "]", "unknown job state"});
      }
      states.push_back(state);
    }
    db::JobPage page;
    try {
      page = ctx_.store->ListJobs(states, std::get<int>(size), request->page_token());
    } catch (const db::InvalidPageToken& e) {
      return InvalidArgument({"page_token", e.what()});
    }
    if (call.deadline->Passed()) return call.deadline->Exceeded();
    PageFiller filler(ctx_.config, page.tokens_after, page.next_page_token);
    for (std::size_t i = 0; i < page.jobs.size() && filler.Fits(i, {&page.jobs[i]}); ++i) {
      *response->add_jobs() = std::move(page.jobs[i]);
    }
    response->set_next_page_token(filler.next_page_token());
    return grpc::Status::OK;
  });
}

grpc::Status TuningServiceImpl::CancelJob(grpc::ServerContext* ctx,
                                          const v1::CancelJobRequest* request, v1::Job* response) {
  constexpr CallPolicy kPolicy{
      .method = "CancelJob", .access = Access::kMutate, .needs_database = true};
  return admission_.Run(*ctx, kPolicy, [&](const AdmittedCall& call) -> grpc::Status {
    if (auto s = LoadJob(ctx_, request->job_id(), *response); !s.ok()) return s;
    if (!ctx_.store->CancelJob(request->job_id())) {
      return {grpc::StatusCode::FAILED_PRECONDITION,
              "job_id: job " + kernels::Quoted(request->job_id()) + " already finished (" +
                  v1::JobState_Name(response->state()) + ")"};
    }
    if (ctx_.scheduler) ctx_.scheduler->Cancel(request->job_id());
    spdlog::info("job={} request={} peer={} caller={}: cancelled", request->job_id(),
                 RequestId(*ctx), ctx->peer(), call.caller.identity);
    if (auto cancelled = ctx_.store->GetJob(request->job_id())) {
      MarkVerificationCancelled(ctx_, *cancelled);
    }
    auto status = LoadJob(ctx_, request->job_id(), *response);
    v1::JobEvent event;
    event.set_kind(v1::JobEvent::KIND_JOB_FINISHED);
    event.set_job_id(request->job_id());
    event.set_message("cancelled");
    *event.mutable_job() = *response;
    ctx_.events.Publish(event);
    return status;
  });
}

grpc::Status TuningServiceImpl::WatchJob(grpc::ServerContext* ctx,
                                         const v1::WatchJobRequest* request,
                                         grpc::ServerWriter<v1::JobEvent>* writer) {
  constexpr CallPolicy kPolicy{
      .method = "WatchJob", .ceiling = CallCeiling::kStream, .needs_database = true};
  return admission_.Run(*ctx, kPolicy, [&](const AdmittedCall& call) -> grpc::Status {
    const CallDeadline& deadline = *call.deadline;
    // Subscribe before the snapshot so no event falls between the two.
    auto sub = ctx_.events.Subscribe(request->job_id());
    struct Unsubscribe {
      JobEventHub& hub;
      const std::string& id;
      std::shared_ptr<JobEventHub::Subscription>& sub;
      ~Unsubscribe() { hub.Unsubscribe(id, sub); }
    } unsubscribe{ctx_.events, request->job_id(), sub};

    v1::JobEvent snapshot;
    snapshot.set_kind(v1::JobEvent::KIND_SNAPSHOT);
    snapshot.set_job_id(request->job_id());
    if (auto s = LoadJob(ctx_, request->job_id(), *snapshot.mutable_job()); !s.ok()) {
      return s;
    }
    if (!writer->Write(snapshot)) return grpc::Status::OK;
    auto write_finished = [&](const v1::Job& job) {
      v1::JobEvent done;
      done.set_kind(v1::JobEvent::KIND_JOB_FINISHED);
      done.set_job_id(request->job_id());
      *done.mutable_job() = job;
      writer->Write(done);
    };
    if (!IsActive(snapshot.job().state())) {
      write_finished(snapshot.job());
      return grpc::Status::OK;
    }
    // Fleet mode: another daemon may run the job and its events stay there;
    // the store says when it finished.
    const bool fleet = ctx_.devices.queues() == JobQueues::kPerDeviceClass;
    while (!ctx->IsCancelled()) {
      if (deadline.Passed()) return deadline.Exceeded();
      auto event = sub->Next(std::min(std::chrono::milliseconds(200), deadline.Remaining()));
      if (!event) {
        if (sub->closed()) {
          return {grpc::StatusCode::UNAVAILABLE, "tiletuned is shutting down; watch again later"};
        }
        v1::Job job;
        if (fleet && LoadJob(ctx_, request->job_id(), job).ok() && !IsActive(job.state())) {
          write_finished(job);
          break;
        }
        continue;
      }
      // Events carry the job as the scheduler stored it.
      CutToFit(ctx_.config, {&*event});
      if (!writer->Write(*event)) break;
      if (event->kind() == v1::JobEvent::KIND_JOB_FINISHED) break;
    }
    return grpc::Status::OK;
  });
}

grpc::Status TuningServiceImpl::ListTrials(grpc::ServerContext* ctx,
                                           const v1::ListTrialsRequest* request,
                                           v1::ListTrialsResponse* response) {
  constexpr CallPolicy kPolicy{
      .method = "ListTrials", .ceiling = CallCeiling::kRequest, .needs_database = true};
  return admission_.Run(*ctx, kPolicy, [&](const AdmittedCall& call) -> grpc::Status {
    auto size = PageSize(request->page_size(), ctx_.config.max_page_size);
    if (auto* e = std::get_if<kernels::FieldError>(&size)) return InvalidArgument(*e);
    v1::Job job;
    if (auto s = LoadJob(ctx_, request->job_id(), job); !s.ok()) return s;
    if (request->item_index() < 0 || request->item_index() >= job.items_size()) {
      return InvalidArgument({"item_index", "job " + kernels::Quoted(job.id()) + " has " +
                                                std::to_string(job.items_size()) + " item(s)"});
    }
    auto start = TrialPageOffset(request->page_token());
    if (auto* e = std::get_if<kernels::FieldError>(&start)) return InvalidArgument(*e);
    const std::size_t offset = std::get<std::size_t>(start);
    auto trials = ctx_.store->TrialsForItem(job.id(), request->item_index());
    if (call.deadline->Passed()) return call.deadline->Exceeded();
    const std::size_t end = std::min(trials.size(), offset + std::get<int>(size));
    std::vector<std::string> tokens_after;
    for (std::size_t i = offset; i < end; ++i) tokens_after.push_back(std::to_string(i + 1));
    const std::string next = end < trials.size() ? std::to_string(end) : std::string();
    if (offset == 0) {
      const std::string device_class = QueueDeviceClass(ctx_, job.device());
      if (!device_class.empty()) {
        const auto& key = job.items(request->item_index()).key();
        if (auto record = ctx_.store->FindRecord(kernels::CanonicalKeyString(key), device_class)) {
          CutToFit(ctx_.config, {&*record});
          *response->mutable_record() = std::move(*record);
        }
      }
    }
    PageFiller filler(ctx_.config, tokens_after, next);
    for (std::size_t i = offset; i < end && filler.Fits(i - offset, {&trials[i]}); ++i) {
      *response->add_trials() = std::move(trials[i]);
    }
    response->set_next_page_token(filler.next_page_token());
    return grpc::Status::OK;
  });
}

}  // namespace tiletune::server
