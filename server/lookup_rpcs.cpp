// Lookup, LookupStream and BatchLookup: past the admission gate, each lookup
// is the LookupResolver's; these add the batch's size limit and deadline, the
// attached kernel when asked, and turn the resolver's answer into a gRPC
// status.
#include <algorithm>
#include <exception>
#include <string>
#include <string_view>

#include <google/protobuf/io/coded_stream.h>
#include <google/protobuf/wire_format_lite.h>
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

// How a lookup's answer is framed: as Lookup's reply, or as the `response`
// field of a LookupStreamResponse (whose other fields are then left out: OK).
enum class Framing { kLookupResponse, kStreamAnswer };

constexpr uint32_t kStreamAnswerResponseTag =
    (v1::LookupStreamResponse::kResponseFieldNumber << 3) |
    google::protobuf::internal::WireFormatLite::WIRETYPE_LENGTH_DELIMITED;

// One lookup's answer encoded: `response`, then the served record's cached
// encoding as its `record` field (a message's fields may come in any
// order), in one slice.
grpc::ByteBuffer Encoded(const v1::LookupResponse& response, const LookupCache::Entry& record,
                         Framing framing) {
  const size_t own = response.ByteSizeLong();
  const std::string_view appended = record ? record->response_field : std::string_view();
  const auto length = static_cast<uint32_t>(own + appended.size());
  const size_t frame =
      framing == Framing::kStreamAnswer
          ? google::protobuf::io::CodedOutputStream::VarintSize32(kStreamAnswerResponseTag) +
                google::protobuf::io::CodedOutputStream::VarintSize32(length)
          : 0;
  grpc::Slice slice(grpc_slice_malloc(frame + length), grpc::Slice::STEAL_REF);
  auto* out = const_cast<uint8_t*>(slice.begin());
  if (framing == Framing::kStreamAnswer) {
    out = google::protobuf::io::CodedOutputStream::WriteVarint32ToArray(kStreamAnswerResponseTag,
                                                                        out);
    out = google::protobuf::io::CodedOutputStream::WriteVarint32ToArray(length, out);
  }
  response.SerializeWithCachedSizesToArray(out);
  std::copy(appended.begin(), appended.end(), out + own);
  return grpc::ByteBuffer(&slice, 1);
}

// Parsed as gRPC parses a typed method's request, with its status.
grpc::Status Parse(const grpc::ByteBuffer& bytes, v1::LookupRequest& request) {
  grpc::ByteBuffer copy(bytes);  // Deserialize takes the buffer's contents
  return grpc::SerializationTraits<v1::LookupRequest>::Deserialize(&copy, &request);
}

// A lookup from bytes to bytes: a HIT's record is appended from the cache,
// not copied into the reply; with attach_artifact (which reads the record)
// the reply is a whole message.
grpc::Status AnswerEncodedLookup(const ServiceContext& ctx, LookupResolver& resolver,
                                 const v1::LookupRequest& request, Framing framing,
                                 grpc::ByteBuffer& reply) {
  v1::LookupResponse response;
  if (request.attach_artifact()) {
    auto status = AnswerLookup(ctx, resolver, request, response, "");
    if (status.ok()) reply = Encoded(response, nullptr, framing);
    return status;
  }
  try {
    LookupCache::Entry record;
    if (auto e = resolver.ResolveApart(request, response, record)) return InvalidArgument(*e);
    reply = Encoded(response, record, framing);
  } catch (const std::exception& e) {
    return {grpc::StatusCode::INTERNAL, e.what()};
  }
  return grpc::Status::OK;
}

// One LookupStream. It reads a request, answers it, writes the answer and
// only then reads the next, so answers keep the requests' order and a
// client that stops reading holds one answer here, not a queue. The call is
// admitted once, at its start, and counted once, at its end.
class LookupStreamReactor final
    : public grpc::ServerBidiReactor<grpc::ByteBuffer, grpc::ByteBuffer> {
 public:
  static constexpr CallPolicy kPolicy{.method = "LookupStream", .ceiling = CallCeiling::kStream};

  LookupStreamReactor(const ServiceContext& ctx, LookupResolver& resolver,
                      const CallAdmission& admission, grpc::CallbackServerContext& call)
      : ctx_(ctx),
        resolver_(resolver),
        admission_(admission),
        started_(std::chrono::steady_clock::now()) {
    if (auto status = admission_.Admit(call, kPolicy, admitted_); !status.ok()) {
      End(status);
      return;
    }
    StartRead(&request_);
  }

  void OnReadDone(bool ok) override {
    if (!ok) {  // the client has no more requests, or the call is gone
      End(grpc::Status::OK);
      return;
    }
    if (admitted_.deadline->Passed()) {
      End(admitted_.deadline->Exceeded());
      return;
    }
    answer_.Clear();
    v1::LookupRequest request;
    grpc::Status status = Parse(request_, request);
    if (status.ok()) {
      status = AnswerEncodedLookup(ctx_, resolver_, request, Framing::kStreamAnswer, answer_);
    }
    if (!status.ok()) {
      v1::LookupStreamResponse failed;
      failed.set_code(status.error_code());
      failed.set_message(status.error_message());
      bool own_buffer = false;
      grpc::SerializationTraits<v1::LookupStreamResponse>::Serialize(failed, &answer_, &own_buffer);
    }
    StartWrite(&answer_);
  }

  void OnWriteDone(bool ok) override {
    if (!ok) {
      End({grpc::StatusCode::CANCELLED, "the answer could not be sent"});
      return;
    }
    StartRead(&request_);
  }

  void OnDone() override {
    admission_.Count(kPolicy, final_, started_);
    delete this;
  }

 private:
  void End(const grpc::Status& status) {
    final_ = status;
    Finish(status);
  }

  const ServiceContext& ctx_;
  LookupResolver& resolver_;
  const CallAdmission& admission_;
  const std::chrono::steady_clock::time_point started_;
  AdmittedCall admitted_;
  grpc::ByteBuffer request_;
  grpc::ByteBuffer answer_;
  grpc::Status final_;
};

}  // namespace

grpc::ServerUnaryReactor* TuningServiceImpl::Lookup(grpc::CallbackServerContext* ctx,
                                                    const grpc::ByteBuffer* request_bytes,
                                                    grpc::ByteBuffer* response_bytes) {
  constexpr CallPolicy kPolicy{.method = "Lookup"};
  auto* reactor = ctx->DefaultReactor();
  // As gRPC answers a request it cannot parse, before the call is admitted.
  v1::LookupRequest request;
  if (auto parsed = Parse(*request_bytes, request); !parsed.ok()) {
    reactor->Finish(parsed);
    return reactor;
  }
  reactor->Finish(admission_.Run(*ctx, kPolicy, [&](const AdmittedCall&) {
    return AnswerEncodedLookup(ctx_, resolver_, request, Framing::kLookupResponse, *response_bytes);
  }));
  return reactor;
}

grpc::ServerBidiReactor<grpc::ByteBuffer, grpc::ByteBuffer>* TuningServiceImpl::LookupStream(
    grpc::CallbackServerContext* ctx) {
  return new LookupStreamReactor(ctx_, resolver_, admission_, *ctx);
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
