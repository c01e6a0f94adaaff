#pragma once

#include "server/call_admission.h"
#include "server/lookup_resolver.h"
#include "server/service_context.h"
#include "tiletune/v1/tiletune.grpc.pb.h"

namespace tiletune::server {

// The lookups use the callback API: they answer from memory or a read
// connection and never block on tuning, so they run inline on gRPC's
// threads. Lookup and LookupStream take and give bytes, so that a reply
// appends the cached encoding of the record it serves. Everything else is
// synchronous.
using TuningServiceBase = v1::TuningService::WithRawCallbackMethod_LookupStream<
    v1::TuningService::WithRawCallbackMethod_Lookup<
        v1::TuningService::WithCallbackMethod_BatchLookup<v1::TuningService::Service>>>;

// The gRPC face of the daemon. Every RPC passes the one CallAdmission gate,
// then does its family's work: lookups through the LookupResolver
// (lookup_rpcs.cpp), compiled kernels (kernel_rpcs.cpp), jobs (job_rpcs.cpp), records
// (record_rpcs.cpp), devices and the fleet (device_rpcs.cpp).
class TuningServiceImpl final : public TuningServiceBase {
 public:
  explicit TuningServiceImpl(ServiceContext& context)
      : ctx_(context), admission_(context), resolver_(context) {}

  grpc::ServerUnaryReactor* Lookup(grpc::CallbackServerContext* ctx,
                                   const grpc::ByteBuffer* request,
                                   grpc::ByteBuffer* response) override;
  grpc::ServerBidiReactor<grpc::ByteBuffer, grpc::ByteBuffer>* LookupStream(
      grpc::CallbackServerContext* ctx) override;
  grpc::ServerUnaryReactor* BatchLookup(grpc::CallbackServerContext* ctx,
                                        const v1::BatchLookupRequest* request,
                                        v1::BatchLookupResponse* response) override;
  grpc::Status GetKernel(grpc::ServerContext* ctx, const v1::GetKernelRequest* request,
                         grpc::ServerWriter<v1::GetKernelResponse>* writer) override;
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
  grpc::Status ListTrials(grpc::ServerContext* ctx, const v1::ListTrialsRequest* request,
                          v1::ListTrialsResponse* response) override;
  grpc::Status ListRecords(grpc::ServerContext* ctx, const v1::ListRecordsRequest* request,
                           v1::ListRecordsResponse* response) override;
  grpc::Status ExportRecords(grpc::ServerContext* ctx, const v1::ExportRecordsRequest* request,
                             grpc::ServerWriter<v1::ExportLine>* writer) override;
  grpc::Status ImportRecords(grpc::ServerContext* ctx, const v1::ImportRecordsRequest* request,
                             v1::ImportRecordsResponse* response) override;
  grpc::Status ListDevices(grpc::ServerContext* ctx, const v1::ListDevicesRequest* request,
                           v1::ListDevicesResponse* response) override;

 private:
  ServiceContext& ctx_;
  const CallAdmission admission_;
  LookupResolver resolver_;
};

}  // namespace tiletune::server
