#include "server/job_creation.h"

#include <cstdio>
#include <optional>
#include <random>
#include <vector>

#include <google/protobuf/util/time_util.h>
#include <spdlog/spdlog.h>

#include "kernels/core/kernel_key.h"
#include "kernels/core/key_space.h"
#include "server/job_scheduler.h"
#include "server/planned_kernels.h"
#include "tuner/device_description_of.h"
#include "tuner/explore_step.h"

namespace tiletune::server {
namespace {

std::string NewJobId() {
  static thread_local std::mt19937_64 rng(std::random_device{}());
  char id[20];
  std::snprintf(id, sizeof(id), "j-%012llx",
                static_cast<unsigned long long>(rng() & 0xffffffffffffULL));
  return id;
}

// The device a job in `queue` is planned for: one here that claims from
// it, else (fleet mode: a class only other daemons have) one of its class
// that another daemon announced; nullopt when none is known.
std::optional<runtime::DeviceInfo> PlanningDevice(ServiceContext& context,
                                                  const std::string& queue) {
  if (context.devices.queues() == JobQueues::kPerDevice) {
    if (const ManagedDevice* device = context.devices.Find(queue)) return device->info;
    return std::nullopt;
  }
  if (const ManagedDevice* device = context.devices.FindByClass(queue)) return device->info;
  for (const auto& daemon : context.store->ListDaemons()) {
    for (const auto& device : daemon.devices()) {
      if (device.fingerprint().device_class() == queue) {
        return runtime::DeviceInfo{.id = device.id(),
                                   .backend = device.backend(),
                                   .fingerprint = device.fingerprint(),
                                   .toolchain = device.toolchain()};
      }
    }
  }
  return std::nullopt;
}

// What the tuner will plan for `key` on `device` (the same space and
// budget), so that a watcher knows the job's total before it starts.
int PlannedVariants(const runtime::DeviceInfo& device, const v1::KernelKey& key,
                    const v1::JobSpec& spec, const tuner::TuningLimits& limits) {
  std::string why;
  const auto space = kernels::KeySpace::Of(key, tuner::DeviceDescriptionOf(device), &why);
  return tuner::PlannedVariants(spec.budget(), limits, space.ValidVariants().size());
}

}  // namespace

db::JobAdmissionResult CreateJob(ServiceContext& context, v1::JobSpec spec,
                                 const std::string& queue, const JobRequester& requester,
                                 const db::JobAdmission& admission) {
  v1::Job job;
  job.set_id(NewJobId());
  job.set_state(v1::JOB_QUEUED);
  job.set_device(queue);
  job.set_submitted_by(requester.identity);
  job.set_request_id(requester.request_id);
  *job.mutable_created_at() = google::protobuf::util::TimeUtil::GetCurrentTime();
  std::vector<std::string> canonical;
  // Op graphs run as the kernels of their plans: those are the job's items.
  std::vector<v1::KernelKey> planned = PlannedJobKernels(spec, context.config.key_limits);
  spec.clear_kernels();
  for (auto& key : planned) *spec.add_kernels() = std::move(key);
  const std::optional<runtime::DeviceInfo> device = PlanningDevice(context, queue);
  for (auto& key : *spec.mutable_kernels()) {
    canonical.push_back(kernels::CanonicalKeyString(key));
    auto* item = job.add_items();
    item->set_index(job.items_size() - 1);
    *item->mutable_key() = key;
    item->set_state(v1::JOB_QUEUED);
    if (device)
      item->set_variants_planned(PlannedVariants(*device, key, spec, context.config.tuning));
  }
  *job.mutable_spec() = std::move(spec);
  auto result = context.store->CreateJob(job, canonical, admission);
  if (result.outcome != db::JobAdmissionResult::Outcome::kCreated) return result;
  context.metrics.jobs_submitted.Increment();
  if (context.scheduler) context.scheduler->Wake();
  spdlog::info("job={}: queued {} kernel(s) on {} (priority {})", job.id(),
               job.spec().kernels_size(), queue, job.spec().priority());
  return result;
}

}  // namespace tiletune::server
