// Lookup and BatchLookup: past the admission gate, each lookup is the
// LookupResolver's; these add the batch's size limit and deadline, the
// attached kernel when asked, and turn the resolver's answer into a gRPC
// status.
#include <exception>
#include <string>

#include "server/served_artifact.h"
#include "server/tuning_service.h"

namespace tiletune::server {
namespace {

// The kernel `response` serves, attached to it (and to each kernel of an op
// graph's plan); the code only when the client lacks it and it fits one
// message of artifact_chunk_bytes.
grpc::Status AttachArtifact(const ServiceContext& ctx, const v1::LookupRequest& request,
                            v1::LookupResponse& response) {
  if (response.kernel_results_size() > 0) {
    for (auto& kernel : *response.mutable_kernel_results()) {
      if (auto s = AttachArtifact(ctx, request, kernel); !s.ok()) return s;
    }
    return grpc::Status::OK;
  }
  auto answer = ServeArtifact(ctx, response, /*include_source=*/false);
  if (auto* status = std::get_if<grpc::Status>(&answer)) return *status;
  if (auto* fallback = std::get_if<v1::Fallback>(&answer)) {
    *response.mutable_artifact_fallback() = std::move(*fallback);
    return grpc::Status::OK;
  }
  auto& served = std::get<ServedArtifact>(answer);
  if (served.artifact.content_hash() != request.cached_content_hash() &&
      static_cast<int64_t>(served.code.size()) <= ctx.config.artifact_chunk_bytes) {
    response.set_artifact_code(std::move(served.code));
  }
  *response.mutable_artifact() = std::move(served.artifact);
  return grpc::Status::OK;
}

grpc::Status AnswerLookup(const ServiceContext& ctx, LookupResolver& resolver,
                          const v1::LookupRequest& request, v1::LookupResponse& response,
                          const std::string& prefix) {
  try {
    if (auto e = resolver.Resolve(request, response, prefix)) return InvalidArgument(*e);
    if (request.attach_artifact()) return AttachArtifact(ctx, request, response);
  } catch (const std::exception& e) {
    return {grpc::StatusCode::INTERNAL, e.what()};
  }
  return grpc::Status::OK;
}

}  // namespace

grpc::ServerUnaryReactor* TuningServiceImpl::Lookup(grpc::CallbackServerContext* ctx,
                                                    const v1::LookupRequest* request,
                                                    v1::LookupResponse* response) {
  constexpr CallPolicy kPolicy{.method = "Lookup"};
  auto* reactor = ctx->DefaultReactor();
  reactor->Finish(admission_.Run(*ctx, kPolicy, [&](const AdmittedCall&) {
    return AnswerLookup(ctx_, resolver_, *request, *response, "");
  }));
  return reactor;
}

grpc::ServerUnaryReactor* TuningServiceImpl::BatchLookup(grpc::CallbackServerContext* ctx,
                                                         const v1::BatchLookupRequest* request,
                                                         v1::BatchLookupResponse* response) {
  constexpr CallPolicy kPolicy{.method = "BatchLookup", .ceiling = CallCeiling::kRequest};
  auto* reactor = ctx->DefaultReactor();
  const grpc::Status status =
      admission_.Run(*ctx, kPolicy, [&](const AdmittedCall& call) -> grpc::Status {
        if (request->requests_size() > ctx_.config.max_batch_lookup) {
          return InvalidArgument({"requests", "has " + std::to_string(request->requests_size()) +
                                                  " lookups; the limit is " +
                                                  std::to_string(ctx_.config.max_batch_lookup)});
        }
        for (int i = 0; i < request->requests_size(); ++i) {
          if (call.deadline->Passed()) return call.deadline->Exceeded();
          auto s = AnswerLookup(ctx_, resolver_, request->requests(i), *response->add_responses(),
                                "requests[" + std::to_string(i) + "].");
          if (!s.ok()) return s;
        }
        return grpc::Status::OK;
      });
  if (!status.ok()) response->Clear();
  reactor->Finish(status);
  return reactor;
}

}  // namespace tiletune::server
