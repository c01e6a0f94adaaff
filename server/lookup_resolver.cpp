#include "server/lookup_resolver.h"

#include <chrono>

#include <spdlog/spdlog.h>

#include "kernels/fusion/fusion_planner.h"
#include "server/fleet_view.h"
#include "server/import_verification.h"
#include "server/job_creation.h"
#include "server/request_validation.h"
#include "server/toolchain_identity.h"

namespace tiletune::server {
namespace {

// Spec names of the jobs the lookup path queues by itself.
constexpr const char* kTuneOnMissJob = "tune-on-miss";
constexpr const char* kStaleRetuneJob = "stale-retune";

// Where a job the lookup path queues runs: a device of this daemon, or in
// fleet mode a device class that only other live daemons have.
struct TuningTarget {
  std::string queue;            // Job.device
  v1::DeviceSelector selector;  // JobSpec.device
  std::string miss_key;         // the MissCounter's device
};

TuningTarget LocalTarget(const ManagedDevice& device) {
  TuningTarget target{.queue = device.queue, .miss_key = device.info.id};
  target.selector.set_device(device.info.id);
  return target;
}

// nullopt when nothing in reach can tune for `device`.
std::optional<TuningTarget> TargetFor(ServiceContext& ctx, const ResolvedDevice& device) {
  if (device.device) return LocalTarget(*device.device);
  if (ctx.devices.queues() != JobQueues::kPerDeviceClass) return std::nullopt;
  bool served = false;
  if (!ctx.database.Attempt([&] {
        served = ServedDeviceClasses(ListFleet(*ctx.store, ctx.config.fleet_gone_after_seconds))
                     .contains(device.device_class);
      }) ||
      !served) {
    return std::nullopt;
  }
  // Queued by class, run by whichever daemon of the class claims it.
  TuningTarget target{.queue = device.device_class, .miss_key = device.device_class};
  target.selector.set_device_class(device.device_class);
  return target;
}

// Queues a job named `job_name` that tunes `key` on `target` unless one is
// queued or running for it already; its id, or nullopt with `why` when the
// cap on such jobs (max_queued_tune_on_miss) is reached or the database
// is unreachable.
std::optional<std::string> QueueTuning(ServiceContext& ctx, const v1::KernelKey& key,
                                       const std::string& canonical, const TuningTarget& target,
                                       const std::string& job_name, std::string* why) {
  v1::JobSpec spec;
  spec.set_name(job_name);
  *spec.add_kernels() = kernels::NormalizeKernelKey(key);
  spec.set_priority(ctx.config.tune_on_miss_priority);
  *spec.mutable_device() = target.selector;
  db::JobAdmissionResult created;
  // A flood of lookups for one key, on any daemon of the database, makes
  // one job: the store reuses an active one for the key.
  if (!ctx.database.Attempt([&] {
        created = CreateJob(
            ctx, std::move(spec), target.queue, JobRequester{},
            {.max_active_named = ctx.config.max_queued_tune_on_miss, .reuse_active_for_key = true});
      })) {
    *why = "not queued: the tuning database is unreachable";
    return std::nullopt;
  }
  if (created.outcome == db::JobAdmissionResult::Outcome::kTooManyNamed) {
    *why = "not queued: " + std::to_string(created.active) + " " + job_name +
           " jobs already queued (max_queued_tune_on_miss=" +
           std::to_string(ctx.config.max_queued_tune_on_miss) + ")";
    return std::nullopt;
  }
  ctx.misses.SetJob(target.miss_key, canonical, created.job_id);
  return created.job_id;
}

std::optional<kernels::FieldError> Answer(ServiceContext& ctx, const v1::LookupRequest& request,
                                          v1::LookupResponse& response, const std::string& prefix,
                                          LookupCache::Entry& served);

// Answer with the record served copied into `response`.
std::optional<kernels::FieldError> AnswerWithRecord(ServiceContext& ctx,
                                                    const v1::LookupRequest& request,
                                                    v1::LookupResponse& response,
                                                    const std::string& prefix) {
  LookupCache::Entry served;
  auto error = Answer(ctx, request, response, prefix, served);
  if (served) *response.mutable_record() = *served->record;
  return error;
}

// A lookup of an op graph: its fusion plan, one answer per kernel.
std::optional<kernels::FieldError> AnswerGraph(ServiceContext& ctx,
                                               const v1::LookupRequest& request,
                                               v1::LookupResponse& response,
                                               const std::string& prefix) {
  *response.mutable_plan() = kernels::fusion::PlanFusion(request.key(), ctx.config.key_limits);
  int misses = 0;
  std::string fallback_library;
  for (int i = 0; i < response.plan().kernels_size(); ++i) {
    v1::LookupRequest kernel_request = request;
    *kernel_request.mutable_key() = response.plan().kernels(i).key();
    auto& answer = *response.add_kernel_results();
    if (auto e = AnswerWithRecord(ctx, kernel_request, answer,
                                  prefix + "plan.kernels[" + std::to_string(i) + "].")) {
      return e;
    }
    if (answer.result() != v1::LookupResponse::RESULT_HIT) {
      ++misses;
      fallback_library = answer.fallback().library();
    }
    response.set_device_class(answer.device_class());
  }
  if (misses == 0) {
    response.set_result(v1::LookupResponse::RESULT_HIT);
    return std::nullopt;
  }
  response.set_result(v1::LookupResponse::RESULT_MISS);
  response.mutable_fallback()->set_library(fallback_library);
  response.mutable_fallback()->set_reason(
      std::to_string(misses) + " of " + std::to_string(response.plan().kernels_size()) +
      " kernels of the plan have no tuned record; see kernel_results");
  return std::nullopt;
}

// Fills `response` but its record: the record served (on a HIT, and on a
// MISS whose record says VENDOR) is left in `served`. One validation of the
// key and one canonical string, which the cache, the store and the miss
// counter share.
std::optional<kernels::FieldError> Answer(ServiceContext& ctx, const v1::LookupRequest& request,
                                          v1::LookupResponse& response, const std::string& prefix,
                                          LookupCache::Entry& served) {
  if (auto invalid =
          kernels::ValidateKernelKey(request.key(), ctx.config.key_limits, prefix + "key")) {
    ctx.metrics.lookups_invalid.Increment();
    return invalid;
  }
  auto resolved =
      ResolveDevice(request.device(), ctx.devices, ctx.config.key_limits, prefix + "device");
  if (auto* e = std::get_if<kernels::FieldError>(&resolved)) {
    ctx.metrics.lookups_invalid.Increment();
    return *e;
  }
  const auto& device = std::get<ResolvedDevice>(resolved);
  if (kernels::IsGraphKey(request.key())) return AnswerGraph(ctx, request, response, prefix);
  const std::string canonical = kernels::CanonicalKeyString(request.key());
  response.set_device_class(device.device_class);

  auto cached = ctx.cache.Find(device.device_class, canonical);
  bool unanswered = false;  // the database could not be asked
  if (!cached) {
    const uint64_t erasures = ctx.cache.Erasures(device.device_class, canonical);
    unanswered = !ctx.database.Attempt([&] {
      std::shared_ptr<const v1::Record> found;
      if (auto record = ctx.store->FindRecord(canonical, device.device_class)) {
        found = std::make_shared<const v1::Record>(std::move(*record));
      }
      // Served from what the cache keeps, however the race with an Erase
      // went.
      cached = found ? std::make_shared<const CachedRecord>(found) : nullptr;
      ctx.cache.PutUnlessErased(device.device_class, canonical, std::move(found), erasures);
    });
  }
  LookupCache::Entry entry = cached ? *cached : nullptr;

  const std::string library = FallbackLibraryFor(device.vendor);
  if (unanswered) {
    // A client asking for a kernel wants an answer now: the vendor library
    // is one, and the next lookup after the database is back may hit.
    response.set_result(v1::LookupResponse::RESULT_MISS);
    ctx.metrics.lookups_miss.Increment();
    response.mutable_fallback()->set_library(library);
    response.mutable_fallback()->set_reason(
        "the tuning database is unreachable and this daemon has no cached answer for this key");
    return std::nullopt;
  }
  // An imported record is served once this daemon's device class has
  // re-measured it: until then a miss; after a failed verification, as if
  // there were none (tune_on_miss may tune the key).
  std::string unserved;
  if (entry && !Servable(*entry->record)) {
    unserved = "the imported record of this key is not served (" +
               v1::Trust_Name(entry->record->provenance().trust()) +
               "): " + entry->record->provenance().verification() + "; ";
    if (entry->record->provenance().trust() == v1::TRUST_UNVERIFIED) {
      response.set_result(v1::LookupResponse::RESULT_MISS);
      ctx.metrics.lookups_miss.Increment();
      response.mutable_fallback()->set_library(library);
      response.mutable_fallback()->set_reason(unserved + "run " + library);
      return std::nullopt;
    }
    entry = nullptr;
  }
  if (entry) {
    const v1::Record& record = *entry->record;
    *response.mutable_staleness() = StalenessOf(record, device.device);
    // A stale record is still the best answer there is; it is tuned again
    // once, and the new record replaces it.
    if (response.staleness().stale() && ctx.misses.FirstRetuneOf(device.device->info.id, canonical,
                                                                 record.measured_at().seconds())) {
      std::string why;
      if (auto job = QueueTuning(ctx, request.key(), canonical, LocalTarget(*device.device),
                                 kStaleRetuneJob, &why)) {
        response.set_job_id(*job);
      } else {
        spdlog::warn("stale record {}: no re-tune queued: {}", canonical, why);
      }
    }
  }
  served = entry;
  if (entry && entry->record->winner() == v1::WINNER_TUNED) {
    response.set_result(v1::LookupResponse::RESULT_HIT);
    ctx.metrics.lookups_hit.Increment();
    return std::nullopt;
  }
  response.set_result(v1::LookupResponse::RESULT_MISS);
  ctx.metrics.lookups_miss.Increment();
  auto* fallback = response.mutable_fallback();
  fallback->set_library(library);
  if (entry) {
    const v1::Record& record = *entry->record;
    fallback->set_reason("tuning found nothing faster than " + record.baseline_name() + " (" +
                         std::to_string(record.baseline().median_us()) +
                         " us): " + record.decision().reason());
    return std::nullopt;
  }
  fallback->set_reason(unserved + "no tuning record for this key on device class " +
                       device.device_class);
  if (!request.tune_on_miss()) return std::nullopt;
  auto target = TargetFor(ctx, device);
  if (!target) {
    fallback->set_reason(
        fallback->reason() + "; tune_on_miss ignored: no device of this class here" +
        (ctx.devices.queues() == JobQueues::kPerDeviceClass ? " nor on a live daemon of the fleet"
                                                            : ""));
    return std::nullopt;
  }
  ctx.misses.Count(target->miss_key, canonical);
  std::string why;
  if (auto job = QueueTuning(ctx, request.key(), canonical, *target, kTuneOnMissJob, &why)) {
    response.set_job_id(*job);
  } else {
    fallback->set_reason(fallback->reason() + "; tune_on_miss: " + why);
  }
  return std::nullopt;
}

// Times a lookup whatever the outcome, a thrown storage error included.
struct LookupTimer {
  Histogram& seconds;
  const std::chrono::steady_clock::time_point started = std::chrono::steady_clock::now();
  ~LookupTimer() {
    seconds.Observe(
        std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count());
  }
};

}  // namespace

std::optional<kernels::FieldError> LookupResolver::Resolve(const v1::LookupRequest& request,
                                                           v1::LookupResponse& response,
                                                           const std::string& prefix) {
  const LookupTimer timer{ctx_.metrics.lookup_seconds};
  return AnswerWithRecord(ctx_, request, response, prefix);
}

std::optional<kernels::FieldError> LookupResolver::ResolveApart(const v1::LookupRequest& request,
                                                                v1::LookupResponse& response,
                                                                LookupCache::Entry& record) {
  const LookupTimer timer{ctx_.metrics.lookup_seconds};
  return Answer(ctx_, request, response, "", record);
}

v1::Staleness StalenessOf(const v1::Record& record, const ManagedDevice* device) {
  v1::Staleness staleness;
  if (!device) return staleness;
  if (auto difference = ToolchainDifference(record.toolchain(), device->info.toolchain)) {
    staleness.set_stale(true);
    staleness.set_reason("measured with another toolchain: " + *difference);
  }
  return staleness;
}

}  // namespace tiletune::server
