// Lookup and BatchLookup: past the admission gate, each lookup is the
// LookupResolver's; these add the batch's size limit and deadline and turn
// the resolver's answer into a gRPC status.
#include <exception>
#include <string>

#include "server/tuning_service.h"

namespace tiletune::server {
namespace {

grpc::Status AnswerLookup(LookupResolver& resolver, const v1::LookupRequest& request,
                          v1::LookupResponse& response, const std::string& prefix) {
  try {
    if (auto e = resolver.Resolve(request, response, prefix)) return InvalidArgument(*e);
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
    return AnswerLookup(resolver_, *request, *response, "");
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
          auto s = AnswerLookup(resolver_, request->requests(i), *response->add_responses(),
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
