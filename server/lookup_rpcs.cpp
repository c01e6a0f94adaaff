// Lookup and BatchLookup: past the admission gate, each lookup is the
// LookupResolver's; these add the batch's size limit and deadline, the
// attached kernel when asked, and turn the resolver's answer into a gRPC
// status.
#include <algorithm>
#include <exception>
#include <string>
#include <string_view>

#include <grpcpp/support/byte_buffer.h>
#include <grpcpp/support/proto_buffer_reader.h>
#include <grpcpp/support/slice.h>

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

// One Lookup's reply encoded: `response`, then the served record's cached
// encoding as its `record` field (a message's fields may come in any
// order), in one slice.
grpc::ByteBuffer Encoded(const v1::LookupResponse& response, const LookupCache::Entry& record) {
  const size_t own = response.ByteSizeLong();
  const std::string_view appended = record ? record->response_field : std::string_view();
  grpc::Slice slice(grpc_slice_malloc(own + appended.size()), grpc::Slice::STEAL_REF);
  auto* out = const_cast<uint8_t*>(slice.begin());
  response.SerializeWithCachedSizesToArray(out);
  std::copy(appended.begin(), appended.end(), out + own);
  return grpc::ByteBuffer(&slice, 1);
}

// A Lookup from bytes to bytes: a HIT's record is appended from the cache,
// not copied into the reply; with attach_artifact (which reads the record)
// the reply is a whole message.
grpc::Status AnswerEncodedLookup(const ServiceContext& ctx, LookupResolver& resolver,
                                 const v1::LookupRequest& request, grpc::ByteBuffer& reply) {
  v1::LookupResponse response;
  if (request.attach_artifact()) {
    auto status = AnswerLookup(ctx, resolver, request, response, "");
    if (status.ok()) reply = Encoded(response, nullptr);
    return status;
  }
  try {
    LookupCache::Entry record;
    if (auto e = resolver.ResolveApart(request, response, record)) return InvalidArgument(*e);
    reply = Encoded(response, record);
  } catch (const std::exception& e) {
    return {grpc::StatusCode::INTERNAL, e.what()};
  }
  return grpc::Status::OK;
}

}  // namespace

grpc::ServerUnaryReactor* TuningServiceImpl::Lookup(grpc::CallbackServerContext* ctx,
                                                    const grpc::ByteBuffer* request_bytes,
                                                    grpc::ByteBuffer* response_bytes) {
  constexpr CallPolicy kPolicy{.method = "Lookup"};
  auto* reactor = ctx->DefaultReactor();
  // As gRPC answers a request it cannot parse, before the call is admitted.
  v1::LookupRequest request;
  grpc::ByteBuffer bytes(*request_bytes);
  if (auto parsed = grpc::SerializationTraits<v1::LookupRequest>::Deserialize(&bytes, &request);
      !parsed.ok()) {
    reactor->Finish(parsed);
    return reactor;
  }
  reactor->Finish(admission_.Run(*ctx, kPolicy, [&](const AdmittedCall&) {
    return AnswerEncodedLookup(ctx_, resolver_, request, *response_bytes);
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
