// GetKernel: the compiled kernel a HIT serves, for a client to load and
// launch. Past the admission gate the key is looked up as Lookup does (no
// tuning is queued) and the kernel served (server/served_artifact) is
// streamed: its description and ABI first, then its code in chunks.
// Anything short of that answers the fallback and why, never another binary.
#include <string>

#include "kernels/core/kernel_key.h"
#include "server/served_artifact.h"
#include "server/tuning_service.h"

namespace tiletune::server {

grpc::Status TuningServiceImpl::GetKernel(grpc::ServerContext* ctx,
                                          const v1::GetKernelRequest* request,
                                          grpc::ServerWriter<v1::GetKernelResponse>* writer) {
  constexpr CallPolicy kPolicy{.method = "GetKernel", .ceiling = CallCeiling::kStream};
  return admission_.Run(*ctx, kPolicy, [&](const AdmittedCall& call) -> grpc::Status {
    if (kernels::IsGraphKey(request->key())) {
      return InvalidArgument({"key",
                              "is an op graph; ask GetKernel for each kernel of its plan "
                              "(LookupResponse.plan)"});
    }
    v1::LookupRequest lookup_request;
    *lookup_request.mutable_key() = request->key();
    *lookup_request.mutable_device() = request->device();
    v1::LookupResponse lookup;
    try {
      if (auto e = resolver_.Resolve(lookup_request, lookup)) return InvalidArgument(*e);
    } catch (const std::exception& e) {
      return {grpc::StatusCode::INTERNAL, e.what()};
    }
    v1::GetKernelResponse head;
    if (lookup.has_record()) *head.mutable_record() = lookup.record();
    auto answer = ServeArtifact(ctx_, lookup, request->include_source());
    if (auto* status = std::get_if<grpc::Status>(&answer)) return *status;
    if (auto* fallback = std::get_if<v1::Fallback>(&answer)) {
      *head.mutable_fallback() = std::move(*fallback);
      writer->Write(head);
      return grpc::Status::OK;
    }
    auto& served = std::get<ServedArtifact>(answer);
    if (call.deadline->Passed()) return call.deadline->Exceeded();
    *head.mutable_artifact() = std::move(served.artifact);
    if (!request->cached_content_hash().empty() &&
        request->cached_content_hash() == head.artifact().content_hash()) {
      head.set_unchanged(true);
      writer->Write(head);
      return grpc::Status::OK;
    }
    const std::string& code = served.code;
    const size_t chunk = static_cast<size_t>(ctx_.config.artifact_chunk_bytes);
    head.set_code_chunk(code.substr(0, chunk));
    if (!writer->Write(head)) return {grpc::StatusCode::CANCELLED, "the client went away"};
    for (size_t at = chunk; at < code.size(); at += chunk) {
      if (call.deadline->Passed()) return call.deadline->Exceeded();
      v1::GetKernelResponse next;
      next.set_code_chunk(code.substr(at, chunk));
      if (!writer->Write(next)) return {grpc::StatusCode::CANCELLED, "the client went away"};
    }
    return grpc::Status::OK;
  });
}

}  // namespace tiletune::server
