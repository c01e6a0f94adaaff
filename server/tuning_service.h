#pragma once

#include <atomic>
#include <mutex>
#include <set>
#include <string>
#include <vector>

#include "db/tuning_store.h"
#include "server/call_authorizer.h"
#include "server/daemon_config.h"
#include "server/daemon_metrics.h"
#include "server/database_health.h"
#include "server/device_registry.h"
#include "server/job_event_hub.h"
#include "server/job_scheduler.h"
#include "server/lookup_cache.h"
#include "server/miss_counter.h"
#include "server/request_validation.h"
#include "tiletune/v1/tiletune.grpc.pb.h"

namespace tiletune::server {

// Lookup and BatchLookup use the callback API: they answer from memory or a
// read connection and never block on tuning, so they run inline on gRPC's
// threads. Everything else is synchronous.
using TuningServiceBase = v1::TuningService::WithCallbackMethod_Lookup<
    v1::TuningService::WithCallbackMethod_BatchLookup<v1::TuningService::Service>>;

// What the service needs from the daemon. `store` is null until the
// database is open; calls answer UNAVAILABLE until `ready`.
struct ServiceContext {
  const DaemonConfig& config;
  DeviceRegistry& devices;
  LookupCache& cache;
  JobEventHub& events;
  DaemonMetrics& metrics;
  DatabaseHealth& database;
  MissCounter misses{config.max_missed_keys};
  db::TuningStore* store = nullptr;
  JobScheduler* scheduler = nullptr;
  // Null: every call is open.
  const CallAuthorizer* authorizer = nullptr;
  std::atomic<bool> ready{false};
  std::atomic<bool> draining{false};
  google::protobuf::Timestamp started_at;
};

class TuningServiceImpl final : public TuningServiceBase {
 public:
  explicit TuningServiceImpl(ServiceContext& context);

  grpc::ServerUnaryReactor* Lookup(grpc::CallbackServerContext* ctx,
                                   const v1::LookupRequest* request,
                                   v1::LookupResponse* response) override;
  grpc::ServerUnaryReactor* BatchLookup(grpc::CallbackServerContext* ctx,
                                        const v1::BatchLookupRequest* request,
                                        v1::BatchLookupResponse* response) override;
  grpc::Status SubmitJob(grpc::ServerContext* ctx, const v1::SubmitJobRequest* request,
                         v1::SubmitJobResponse* response) override;
  grpc::Status GetJob(grpc::ServerContext* ctx, const v1::GetJobRequest* request,
                      v1::Job* response) override;
  grpc::Status ListJobs(grpc::ServerContext* ctx, const v1::ListJobsRequest* request,
                        v1::ListJobsResponse* response) override;
  grpc::Status CancelJob(grpc::ServerContext* ctx, const v1::CancelJobRequest* request,
                         v1::Job* response) override;
  grpc::Status WatchJob(grpc::ServerContext* ctx, const v1::WatchJobRequest* request,
                        grpc::ServerWriter<v1::JobEvent>* writer) override;
  grpc::Status ListRecords(grpc::ServerContext* ctx, const v1::ListRecordsRequest* request,
                           v1::ListRecordsResponse* response) override;
  grpc::Status ExportRecords(grpc::ServerContext* ctx, const v1::ExportRecordsRequest* request,
                             grpc::ServerWriter<v1::ExportLine>* writer) override;
  grpc::Status ImportRecords(grpc::ServerContext* ctx, const v1::ImportRecordsRequest* request,
                             v1::ImportRecordsResponse* response) override;
  grpc::Status ListDevices(grpc::ServerContext* ctx, const v1::ListDevicesRequest* request,
                           v1::ListDevicesResponse* response) override;

 private:
  grpc::Status Unready() const;
  grpc::Status Admit(const grpc::ServerContextBase& ctx, Access access, std::string_view method,
                     Caller& caller) const;
  grpc::Status Admit(const grpc::ServerContextBase& ctx, Access access,
                     std::string_view method) const;
  // Runs a call that needs the database: refused at once while it is known
  // to be unreachable, UNAVAILABLE when it turns out to be, INTERNAL on
  // another storage failure.
  template <typename Body>
  grpc::Status WithDatabase(Body&& body);
  grpc::Status DatabaseUnavailable() const;
  grpc::Status AnswerLookup(const v1::LookupRequest& request, v1::LookupResponse& response,
                            const std::string& prefix);
  // A lookup of an op graph: its fusion plan, one answer per kernel.
  grpc::Status AnswerGraphLookup(const v1::LookupRequest& request, v1::LookupResponse& response,
                                 const std::string& prefix);
  // Creates a job from a validated spec unless `admission` refuses it or
  // reuses another. `submitted_by` is the caller's identity, empty for jobs
  // the daemon queues itself. `queue` is the Job.device it waits in
  // (ManagedDevice::queue).
  db::JobAdmissionResult CreateJob(v1::JobSpec spec, const std::string& queue,
                                   const std::string& submitted_by,
                                   const db::JobAdmission& admission);
  // Every daemon of the database, those silent past fleet_gone_after_seconds
  // marked gone.
  std::vector<v1::FleetDaemon> ListFleet() const;
  // Where a job the lookup path queues runs: a device of this daemon, or in
  // fleet mode a device class that only other live daemons have.
  struct TuningTarget {
    std::string queue;            // Job.device
    v1::DeviceSelector selector;  // JobSpec.device
    std::string miss_key;         // the MissCounter's device
  };
  static TuningTarget LocalTarget(const ManagedDevice& device);
  // nullopt when nothing in reach can tune for `device`.
  std::optional<TuningTarget> TargetFor(const ResolvedDevice& device) const;
  // Queues a job named `job_name` that tunes `key` on `target` unless one is
  // queued or running for it already; its id, or nullopt with `why` when the
  // cap on such jobs (max_queued_tune_on_miss) is reached or the database
  // is unreachable.
  std::optional<std::string> QueueTuning(const v1::KernelKey& key, const std::string& canonical,
                                         const TuningTarget& target, const std::string& job_name,
                                         std::string* why);
  // Whether a record was measured with another toolchain than `device` runs.
  v1::Staleness StalenessOf(const v1::Record& record, const ManagedDevice* device) const;
  grpc::Status LoadJob(const std::string& job_id, v1::Job& job);

  ServiceContext& ctx_;
};

}  // namespace tiletune::server
