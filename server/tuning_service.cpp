#include "server/tuning_service.h"

#include <chrono>
#include <random>

#include <google/protobuf/util/time_util.h>
#include <spdlog/spdlog.h>

#include "kernels/core/kernel_key.h"
#include "kernels/fusion/fusion_planner.h"
#include "server/call_deadline.h"
#include "server/fleet_view.h"
#include "server/planned_kernels.h"
#include "server/record_import.h"
#include "server/request_validation.h"
#include "server/toolchain_identity.h"

namespace tiletune::server {
namespace {

using google::protobuf::util::TimeUtil;

grpc::Status Invalid(const kernels::FieldError& e) {
  return {grpc::StatusCode::INVALID_ARGUMENT, e.ToString()};
}

std::string NewJobId() {
  static thread_local std::mt19937_64 rng(std::random_device{}());
  char id[20];
  std::snprintf(id, sizeof(id), "j-%012llx",
                static_cast<unsigned long long>(rng() & 0xffffffffffffULL));
  return id;
}

// The request id a client sent (x-request-id), for logs.
std::string RequestId(const grpc::ServerContextBase& ctx) {
  const auto& md = ctx.client_metadata();
  auto it = md.find("x-request-id");
  return it == md.end() ? "-" : std::string(it->second.data(), it->second.size());
}

// Spec names of the jobs the lookup path queues by itself.
constexpr const char* kTuneOnMissJob = "tune-on-miss";
constexpr const char* kStaleRetuneJob = "stale-retune";

bool IsActive(v1::JobState state) {
  return state == v1::JOB_QUEUED || state == v1::JOB_RUNNING;
}

}  // namespace

TuningServiceImpl::TuningServiceImpl(ServiceContext& context) : ctx_(context) {}

grpc::Status TuningServiceImpl::Unready() const {
  if (ctx_.ready.load()) return grpc::Status::OK;
  return {grpc::StatusCode::UNAVAILABLE, "tiletuned is starting: the database is not open yet"};
}

grpc::Status TuningServiceImpl::Admit(const grpc::ServerContextBase& ctx, Access access,
                                      std::string_view method, Caller& caller) const {
  if (auto s = Unready(); !s.ok()) return s;
  if (!ctx_.authorizer) return grpc::Status::OK;
  return ctx_.authorizer->Admit(ctx, access, method, caller);
}

grpc::Status TuningServiceImpl::Admit(const grpc::ServerContextBase& ctx, Access access,
                                      std::string_view method) const {
  Caller caller;
  return Admit(ctx, access, method, caller);
}

grpc::Status TuningServiceImpl::DatabaseUnavailable() const {
  return {grpc::StatusCode::UNAVAILABLE,
          "the tuning database is unreachable (" + ctx_.database.why() +
              "); lookups are answered from this daemon's cache, calls that need the database "
              "work again once it is back"};
}

template <typename Body>
grpc::Status TuningServiceImpl::WithDatabase(Body&& body) {
  grpc::Status status;
  try {
    if (ctx_.database.Attempt([&] { status = body(); })) return status;
  } catch (const db::StoreError& e) {
    return {grpc::StatusCode::INTERNAL, e.what()};
  }
  return DatabaseUnavailable();
}

grpc::Status TuningServiceImpl::AnswerLookup(const v1::LookupRequest& request,
                                             v1::LookupResponse& response,
                                             const std::string& prefix) {
  if (auto e = kernels::ValidateKernelKey(request.key(), ctx_.config.key_limits, prefix + "key")) {
    ctx_.metrics.lookups_invalid.Increment();
    return Invalid(*e);
  }
  auto resolved = ResolveDevice(request.device(), ctx_.devices, prefix + "device");
  if (auto* e = std::get_if<kernels::FieldError>(&resolved)) {
    ctx_.metrics.lookups_invalid.Increment();
    return Invalid(*e);
  }
  const auto& device = std::get<ResolvedDevice>(resolved);
  if (kernels::IsGraphKey(request.key())) return AnswerGraphLookup(request, response, prefix);
  const std::string canonical = kernels::CanonicalKeyString(request.key());
  response.set_device_class(device.device_class);

  auto cached = ctx_.cache.Find(device.device_class, canonical);
  LookupCache::Entry entry;
  bool unanswered = false;  // the database could not be asked
  if (cached) {
    entry = *cached;
  } else {
    const uint64_t erasures = ctx_.cache.Erasures(device.device_class, canonical);
    unanswered = !ctx_.database.Attempt([&] {
      if (auto record = ctx_.store->FindRecord(canonical, device.device_class)) {
        entry = std::make_shared<const v1::Record>(std::move(*record));
      }
      ctx_.cache.PutUnlessErased(device.device_class, canonical, entry, erasures);
    });
  }

  const std::string library = FallbackLibraryFor(device.vendor);
  if (unanswered) {
    // A client asking for a kernel wants an answer now: the vendor library
    // is one, and the next lookup after the database is back may hit.
    response.set_result(v1::LookupResponse::RESULT_MISS);
    ctx_.metrics.lookups_miss.Increment();
    response.mutable_fallback()->set_library(library);
    response.mutable_fallback()->set_reason(
        "the tuning database is unreachable and this daemon has no cached answer for this key");
    return grpc::Status::OK;
  }
  if (entry) {
    *response.mutable_staleness() = StalenessOf(*entry, device.device);
    // A stale record is still the best answer there is; it is tuned again
    // once, and the new record replaces it.
    if (response.staleness().stale() && ctx_.misses.FirstRetuneOf(device.device->info.id, canonical,
                                                                  entry->measured_at().seconds())) {
      std::string why;
      if (auto job = QueueTuning(request.key(), canonical, LocalTarget(*device.device),
                                 kStaleRetuneJob, &why)) {
        response.set_job_id(*job);
      } else {
        spdlog::warn("stale record {}: no re-tune queued: {}", canonical, why);
      }
    }
  }
  if (entry && entry->winner() == v1::WINNER_TUNED) {
    response.set_result(v1::LookupResponse::RESULT_HIT);
    *response.mutable_record() = *entry;
    ctx_.metrics.lookups_hit.Increment();
    return grpc::Status::OK;
  }
  response.set_result(v1::LookupResponse::RESULT_MISS);
  ctx_.metrics.lookups_miss.Increment();
  auto* fallback = response.mutable_fallback();
  fallback->set_library(library);
  if (entry) {
    *response.mutable_record() = *entry;
    fallback->set_reason("tuning found nothing faster than " + entry->baseline_name() + " (" +
                         std::to_string(entry->baseline().median_us()) +
                         " us): " + entry->decision().reason());
    return grpc::Status::OK;
  }
  fallback->set_reason("no tuning record for this key on device class " + device.device_class);
  if (!request.tune_on_miss()) return grpc::Status::OK;
  auto target = TargetFor(device);
  if (!target) {
    fallback->set_reason(
        fallback->reason() + "; tune_on_miss ignored: no device of this class here" +
        (ctx_.devices.queues() == JobQueues::kPerDeviceClass ? " nor on a live daemon of the fleet"
                                                             : ""));
    return grpc::Status::OK;
  }
  ctx_.misses.Count(target->miss_key, canonical);
  std::string why;
  if (auto job = QueueTuning(request.key(), canonical, *target, kTuneOnMissJob, &why)) {
    response.set_job_id(*job);
  } else {
    fallback->set_reason(fallback->reason() + "; tune_on_miss: " + why);
  }
  return grpc::Status::OK;
}

grpc::Status TuningServiceImpl::AnswerGraphLookup(const v1::LookupRequest& request,
                                                  v1::LookupResponse& response,
                                                  const std::string& prefix) {
  *response.mutable_plan() = kernels::fusion::PlanFusion(request.key(), ctx_.config.key_limits);
  int misses = 0;
  std::string fallback_library;
  for (int i = 0; i < response.plan().kernels_size(); ++i) {
    v1::LookupRequest kernel_request = request;
    *kernel_request.mutable_key() = response.plan().kernels(i).key();
    auto& answer = *response.add_kernel_results();
    const grpc::Status status =
        AnswerLookup(kernel_request, answer, prefix + "plan.kernels[" + std::to_string(i) + "].");
    if (!status.ok()) return status;
    if (answer.result() != v1::LookupResponse::RESULT_HIT) {
      ++misses;
      fallback_library = answer.fallback().library();
    }
    response.set_device_class(answer.device_class());
  }
  if (misses == 0) {
    response.set_result(v1::LookupResponse::RESULT_HIT);
    return grpc::Status::OK;
  }
  response.set_result(v1::LookupResponse::RESULT_MISS);
  response.mutable_fallback()->set_library(fallback_library);
  response.mutable_fallback()->set_reason(
      std::to_string(misses) + " of " + std::to_string(response.plan().kernels_size()) +
      " kernels of the plan have no tuned record; see kernel_results");
  return grpc::Status::OK;
}

TuningServiceImpl::TuningTarget TuningServiceImpl::LocalTarget(const ManagedDevice& device) {
  TuningTarget target{.queue = device.queue, .miss_key = device.info.id};
  target.selector.set_device(device.info.id);
  return target;
}

std::optional<TuningServiceImpl::TuningTarget> TuningServiceImpl::TargetFor(
    const ResolvedDevice& device) const {
  if (device.device) return LocalTarget(*device.device);
  if (ctx_.devices.queues() != JobQueues::kPerDeviceClass) return std::nullopt;
  bool served = false;
  if (!ctx_.database.Attempt(
          [&] { served = ServedDeviceClasses(ListFleet()).contains(device.device_class); }) ||
      !served) {
    return std::nullopt;
  }
  // Queued by class, run by whichever daemon of the class claims it.
  TuningTarget target{.queue = device.device_class, .miss_key = device.device_class};
  target.selector.set_device_class(device.device_class);
  return target;
}

std::optional<std::string> TuningServiceImpl::QueueTuning(const v1::KernelKey& key,
                                                          const std::string& canonical,
                                                          const TuningTarget& target,
                                                          const std::string& job_name,
                                                          std::string* why) {
  v1::JobSpec spec;
  spec.set_name(job_name);
  *spec.add_kernels() = kernels::NormalizeKernelKey(key);
  spec.set_priority(ctx_.config.tune_on_miss_priority);
  *spec.mutable_device() = target.selector;
  db::JobAdmissionResult created;
  // A flood of lookups for one key, on any daemon of the database, makes
  // one job: the store reuses an active one for the key.
  if (!ctx_.database.Attempt([&] {
        created = CreateJob(std::move(spec), target.queue, /*submitted_by=*/"",
                            {.max_active_named = ctx_.config.max_queued_tune_on_miss,
                             .reuse_active_for_key = true});
      })) {
    *why = "not queued: the tuning database is unreachable";
    return std::nullopt;
  }
  if (created.outcome == db::JobAdmissionResult::Outcome::kTooManyNamed) {
    *why = "not queued: " + std::to_string(created.active) + " " + job_name +
           " jobs already queued (max_queued_tune_on_miss=" +
           std::to_string(ctx_.config.max_queued_tune_on_miss) + ")";
    return std::nullopt;
  }
  ctx_.misses.SetJob(target.miss_key, canonical, created.job_id);
  return created.job_id;
}

v1::Staleness TuningServiceImpl::StalenessOf(const v1::Record& record,
                                             const ManagedDevice* device) const {
  v1::Staleness staleness;
  if (!device) return staleness;
  if (auto difference = ToolchainDifference(record.toolchain(), device->info.toolchain)) {
    staleness.set_stale(true);
    staleness.set_reason("measured with another toolchain: " + *difference);
  }
  return staleness;
}

grpc::ServerUnaryReactor* TuningServiceImpl::Lookup(grpc::CallbackServerContext* ctx,
                                                    const v1::LookupRequest* request,
                                                    v1::LookupResponse* response) {
  auto* reactor = ctx->DefaultReactor();
  if (auto s = Admit(*ctx, Access::kRead, "Lookup"); !s.ok()) {
    reactor->Finish(s);
    return reactor;
  }
  const auto started = std::chrono::steady_clock::now();
  grpc::Status status;
  try {
    status = AnswerLookup(*request, *response, "");
  } catch (const std::exception& e) {
    status = {grpc::StatusCode::INTERNAL, e.what()};
  }
  ctx_.metrics.lookup_seconds.Observe(
      std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count());
  reactor->Finish(status);
  return reactor;
}

grpc::ServerUnaryReactor* TuningServiceImpl::BatchLookup(grpc::CallbackServerContext* ctx,
                                                         const v1::BatchLookupRequest* request,
                                                         v1::BatchLookupResponse* response) {
  auto* reactor = ctx->DefaultReactor();
  const CallDeadline deadline(*ctx, "BatchLookup", ctx_.config.max_request_seconds,
                              "max_request_seconds");
  grpc::Status status = Admit(*ctx, Access::kRead, "BatchLookup");
  if (status.ok() && request->requests_size() > ctx_.config.max_batch_lookup) {
    status = Invalid({"requests", "has " + std::to_string(request->requests_size()) +
                                      " lookups; the limit is " +
                                      std::to_string(ctx_.config.max_batch_lookup)});
  }
  try {
    for (int i = 0; status.ok() && i < request->requests_size(); ++i) {
      if (deadline.Passed()) {
        status = deadline.Exceeded();
        break;
      }
      const auto started = std::chrono::steady_clock::now();
      status = AnswerLookup(request->requests(i), *response->add_responses(),
                            "requests[" + std::to_string(i) + "].");
      ctx_.metrics.lookup_seconds.Observe(
          std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count());
    }
  } catch (const std::exception& e) {
    status = {grpc::StatusCode::INTERNAL, e.what()};
  }
  if (!status.ok()) response->Clear();
  reactor->Finish(status);
  return reactor;
}

db::JobAdmissionResult TuningServiceImpl::CreateJob(v1::JobSpec spec, const std::string& queue,
                                                    const std::string& submitted_by,
                                                    const db::JobAdmission& admission) {
  v1::Job job;
  job.set_id(NewJobId());
  job.set_state(v1::JOB_QUEUED);
  job.set_device(queue);
  job.set_submitted_by(submitted_by);
  *job.mutable_created_at() = TimeUtil::GetCurrentTime();
  std::vector<std::string> canonical;
  // Op graphs run as the kernels of their plans: those are the job's items.
  std::vector<v1::KernelKey> planned = PlannedJobKernels(spec, ctx_.config.key_limits);
  spec.clear_kernels();
  for (auto& key : planned) *spec.add_kernels() = std::move(key);
  for (auto& key : *spec.mutable_kernels()) {
    canonical.push_back(kernels::CanonicalKeyString(key));
    auto* item = job.add_items();
    item->set_index(job.items_size() - 1);
    *item->mutable_key() = key;
    item->set_state(v1::JOB_QUEUED);
  }
  *job.mutable_spec() = std::move(spec);
  auto result = ctx_.store->CreateJob(job, canonical, admission);
  if (result.outcome != db::JobAdmissionResult::Outcome::kCreated) return result;
  ctx_.metrics.jobs_submitted.Increment();
  if (ctx_.scheduler) ctx_.scheduler->Wake();
  spdlog::info("job={}: queued {} kernel(s) on {} (priority {})", job.id(),
               job.spec().kernels_size(), queue, job.spec().priority());
  return result;
}

grpc::Status TuningServiceImpl::SubmitJob(grpc::ServerContext* ctx,
                                          const v1::SubmitJobRequest* request,
                                          v1::SubmitJobResponse* response) {
  Caller caller;
  if (auto s = Admit(*ctx, Access::kMutate, "SubmitJob", caller); !s.ok()) return s;
  return WithDatabase([&]() -> grpc::Status {
    if (ctx_.draining.load()) {
      return {grpc::StatusCode::UNAVAILABLE, "tiletuned is shutting down and takes no new jobs"};
    }
    std::set<std::string> fleet_classes;
    if (ctx_.devices.queues() == JobQueues::kPerDeviceClass) {
      fleet_classes = ServedDeviceClasses(ListFleet());
    }
    if (auto e = ValidateJobSpec(request->spec(), ctx_.config, ctx_.devices, fleet_classes)) {
      return Invalid(*e);
    }
    auto device = std::get<ResolvedDevice>(
        ResolveDevice(request->spec().device(), ctx_.devices, "spec.device"));
    // No local device: a class only other daemons of the fleet have.
    const std::string queue = device.device ? device.device->queue : device.device_class;
    // The caps are checked where the job is stored, so that daemons sharing
    // a database cannot pass them together.
    const auto created =
        CreateJob(request->spec(), queue, caller.identity,
                  {.max_active = ctx_.config.max_queued_jobs,
                   .max_active_submitted = ctx_.config.max_queued_jobs_per_client});
    using Outcome = db::JobAdmissionResult::Outcome;
    if (created.outcome == Outcome::kTooManyActive) {
      return {grpc::StatusCode::RESOURCE_EXHAUSTED,
              "job queue is full (" + std::to_string(created.active) +
                  " queued or running; max_queued_jobs=" +
                  std::to_string(ctx_.config.max_queued_jobs) + ")"};
    }
    if (created.outcome == Outcome::kTooManySubmitted) {
      return {grpc::StatusCode::RESOURCE_EXHAUSTED,
              "'" + caller.identity + "' already has " + std::to_string(created.active) +
                  " jobs queued or running; max_queued_jobs_per_client=" +
                  std::to_string(ctx_.config.max_queued_jobs_per_client)};
    }
    const std::string& id = created.job_id;
    spdlog::info("job={} request={} peer={} caller={}: submitted", id, RequestId(*ctx), ctx->peer(),
                 caller.identity);
    response->set_job_id(id);
    return LoadJob(id, *response->mutable_job());
  });
}

grpc::Status TuningServiceImpl::LoadJob(const std::string& job_id, v1::Job& job) {
  if (job_id.empty()) return Invalid({"job_id", "is required"});
  auto found = ctx_.store->GetJob(job_id);
  if (!found) return {grpc::StatusCode::NOT_FOUND, "job_id: no job '" + job_id + "'"};
  job = std::move(*found);
  return grpc::Status::OK;
}

grpc::Status TuningServiceImpl::GetJob(grpc::ServerContext* ctx, const v1::GetJobRequest* request,
                                       v1::Job* response) {
  if (auto s = Admit(*ctx, Access::kRead, "GetJob"); !s.ok()) return s;
  return WithDatabase([&]() -> grpc::Status { return LoadJob(request->job_id(), *response); });
}

grpc::Status TuningServiceImpl::ListJobs(grpc::ServerContext* ctx,
                                         const v1::ListJobsRequest* request,
                                         v1::ListJobsResponse* response) {
  const CallDeadline deadline(*ctx, "ListJobs", ctx_.config.max_request_seconds,
                              "max_request_seconds");
  if (auto s = Admit(*ctx, Access::kRead, "ListJobs"); !s.ok()) return s;
  return WithDatabase([&]() -> grpc::Status {
    auto size = PageSize(request->page_size(), ctx_.config.max_page_size);
    if (auto* e = std::get_if<kernels::FieldError>(&size)) return Invalid(*e);
    std::vector<v1::JobState> states;
    for (int i = 0; i < request->states_size(); ++i) {
      const auto state = static_cast<v1::JobState>(request->states(i));
      if (!v1::JobState_IsValid(state) || state == v1::JOB_STATE_UNSPECIFIED) {
        return Invalid({"states[" + std::to_string(i) + "]", "unknown job state"});
      }
      states.push_back(state);
    }
    auto page = ctx_.store->ListJobs(states, std::get<int>(size), request->page_token());
    if (deadline.Passed()) return deadline.Exceeded();
    for (auto& job : page.jobs) *response->add_jobs() = std::move(job);
    response->set_next_page_token(page.next_page_token);
    return grpc::Status::OK;
  });
}

grpc::Status TuningServiceImpl::CancelJob(grpc::ServerContext* ctx,
                                          const v1::CancelJobRequest* request, v1::Job* response) {
  Caller caller;
  if (auto s = Admit(*ctx, Access::kMutate, "CancelJob", caller); !s.ok()) return s;
  return WithDatabase([&]() -> grpc::Status {
    if (auto s = LoadJob(request->job_id(), *response); !s.ok()) return s;
    if (!ctx_.store->CancelJob(request->job_id())) {
      return {grpc::StatusCode::FAILED_PRECONDITION,
              "job_id: job '" + request->job_id() + "' already finished (" +
                  v1::JobState_Name(response->state()) + ")"};
    }
    if (ctx_.scheduler) ctx_.scheduler->Cancel(request->job_id());
    spdlog::info("job={} request={} peer={} caller={}: cancelled", request->job_id(),
                 RequestId(*ctx), ctx->peer(), caller.identity);
    auto status = LoadJob(request->job_id(), *response);
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
  const CallDeadline deadline(*ctx, "WatchJob", ctx_.config.max_stream_seconds,
                              "max_stream_seconds");
  if (auto s = Admit(*ctx, Access::kRead, "WatchJob"); !s.ok()) return s;
  return WithDatabase([&]() -> grpc::Status {
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
    if (auto s = LoadJob(request->job_id(), *snapshot.mutable_job()); !s.ok()) return s;
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
        if (fleet && LoadJob(request->job_id(), job).ok() && !IsActive(job.state())) {
          write_finished(job);
          break;
        }
        continue;
      }
      if (!writer->Write(*event)) break;
      if (event->kind() == v1::JobEvent::KIND_JOB_FINISHED) break;
    }
    return grpc::Status::OK;
  });
}

grpc::Status TuningServiceImpl::ListRecords(grpc::ServerContext* ctx,
                                            const v1::ListRecordsRequest* request,
                                            v1::ListRecordsResponse* response) {
  const CallDeadline deadline(*ctx, "ListRecords", ctx_.config.max_request_seconds,
                              "max_request_seconds");
  if (auto s = Admit(*ctx, Access::kRead, "ListRecords"); !s.ok()) return s;
  return WithDatabase([&]() -> grpc::Status {
    auto size = PageSize(request->page_size(), ctx_.config.max_page_size);
    if (auto* e = std::get_if<kernels::FieldError>(&size)) return Invalid(*e);
    if (!request->op().empty() && !kernels::IsKnownOp(request->op())) {
      return Invalid({"op", "unknown op '" + request->op() + "'"});
    }
    auto page = ctx_.store->ListRecords(request->op(), request->device_class(), std::get<int>(size),
                                        request->page_token());
    if (deadline.Passed()) return deadline.Exceeded();
    for (auto& r : page.records) {
      // Judged against a device of the record's class here, if there is one.
      const ManagedDevice* device = nullptr;
      for (const auto& d : ctx_.devices.devices()) {
        if (d->info.fingerprint.device_class() == r.device_class()) device = d.get();
      }
      *response->add_staleness() = StalenessOf(r, device);
      *response->add_records() = std::move(r);
    }
    response->set_next_page_token(page.next_page_token);
    return grpc::Status::OK;
  });
}

grpc::Status TuningServiceImpl::ExportRecords(grpc::ServerContext* ctx,
                                              const v1::ExportRecordsRequest* request,
                                              grpc::ServerWriter<v1::ExportLine>* writer) {
  const CallDeadline deadline(*ctx, "ExportRecords", ctx_.config.max_stream_seconds,
                              "max_stream_seconds");
  if (auto s = Admit(*ctx, Access::kRead, "ExportRecords"); !s.ok()) return s;
  return WithDatabase([&]() -> grpc::Status {
    if (!request->op().empty() && !kernels::IsKnownOp(request->op())) {
      return Invalid({"op", "unknown op '" + request->op() + "'"});
    }
    bool stopped = false;
    bool out_of_time = false;
    ctx_.store->ExportRecords(request->op(), request->device_class(), [&](const v1::Record& r) {
      if (!stopped && deadline.Passed()) out_of_time = true;
      if (stopped || out_of_time || ctx->IsCancelled()) {
        stopped = true;
        return;
      }
      if (!writer->Write(ToExportLine(r))) stopped = true;
    });
    if (ctx->IsCancelled()) return {grpc::StatusCode::CANCELLED, "export cancelled"};
    // A cut-off export must not end OK: the client would take it for whole.
    if (out_of_time) return deadline.Exceeded();
    return grpc::Status::OK;
  });
}

grpc::Status TuningServiceImpl::ImportRecords(grpc::ServerContext* ctx,
                                              const v1::ImportRecordsRequest* request,
                                              v1::ImportRecordsResponse* response) {
  Caller caller;
  if (auto s = Admit(*ctx, Access::kMutate, "ImportRecords", caller); !s.ok()) return s;
  return WithDatabase([&]() -> grpc::Status {
    if (request->jsonl().find_first_not_of(" \t\r\n") == std::string::npos) {
      return Invalid({"jsonl", "is empty"});
    }
    auto parsed = ParseImportLines(request->jsonl(), ctx_.config.key_limits);
    // Ask the store about conflicts even when some lines are bad, so one reply
    // lists every reject; nothing is written unless every line is good.
    auto conflicts = ctx_.store->ImportRecords(parsed.records, request->replace(),
                                               /*dry_run=*/true);
    for (auto& c : conflicts) parsed.rejects.push_back(std::move(c));
    std::sort(parsed.rejects.begin(), parsed.rejects.end(),
              [](const auto& a, const auto& b) { return a.line() < b.line(); });
    for (auto& r : parsed.rejects) *response->add_rejects() = std::move(r);
    if (response->rejects_size() > 0 || request->dry_run()) return grpc::Status::OK;

    auto late = ctx_.store->ImportRecords(parsed.records, request->replace(), /*dry_run=*/false);
    for (auto& r : late) *response->add_rejects() = std::move(r);
    if (!late.empty()) return grpc::Status::OK;
    for (const auto& r : parsed.records) {
      ctx_.cache.Put(r.record.device_class(), r.canonical_key,
                     std::make_shared<const v1::Record>(r.record));
    }
    response->set_imported(static_cast<int>(parsed.records.size()));
    ctx_.metrics.records_imported.Increment(parsed.records.size());
    spdlog::info("request={} peer={} caller={}: imported {} record(s)", RequestId(*ctx),
                 ctx->peer(), caller.identity, parsed.records.size());
    return grpc::Status::OK;
  });
}

grpc::Status TuningServiceImpl::ListDevices(grpc::ServerContext* ctx, const v1::ListDevicesRequest*,
                                            v1::ListDevicesResponse* response) {
  // Devices answer before the database is open; only the credential counts.
  if (ctx_.authorizer) {
    Caller caller;
    if (auto s = ctx_.authorizer->Admit(*ctx, Access::kRead, "ListDevices", caller); !s.ok()) {
      return s;
    }
  }
  for (const auto& b : ctx_.devices.statuses()) {
    auto* status = response->add_backends();
    status->set_name(b.name);
    status->set_available(b.available);
    status->set_reason(b.reason);
  }
  for (const auto& d : ctx_.devices.devices()) *response->add_devices() = ctx_.devices.ToProto(*d);
  response->set_daemon(ctx_.config.daemon_id);
  response->set_version(TILETUNE_VERSION);
  *response->mutable_started_at() = ctx_.started_at;
  if (!ctx_.ready.load()) {
    response->set_fleet_unknown("the database is not open yet");
  } else if (!ctx_.database.Attempt([&] {
               for (auto& daemon : ListFleet()) *response->add_fleet() = std::move(daemon);
             })) {
    response->clear_fleet();
    response->set_fleet_unknown("the tuning database is unreachable: " + ctx_.database.why());
  }
  return grpc::Status::OK;
}

std::vector<v1::FleetDaemon> TuningServiceImpl::ListFleet() const {
  auto daemons = ctx_.store->ListDaemons();
  MarkGoneDaemons(daemons, ctx_.config.fleet_gone_after_seconds);
  return daemons;
}

}  // namespace tiletune::server
