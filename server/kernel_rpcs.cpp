// GetKernel: the compiled kernel a HIT serves, for a client to load and
// launch. Past the admission gate the key is looked up as Lookup does (no
// tuning is queued); a tuned record is rebuilt on a device of its class
// here (tuner/served_kernel: the compiled-code cache first) and streamed:
// its description and ABI first, then its code in chunks. Anything short of
// that answers the fallback and why, never another binary.
#include <fstream>
#include <iterator>
#include <string>

#include "kernels/core/kernel_key.h"
#include "server/artifact_signer.h"
#include "server/tuning_service.h"
#include "tuner/served_kernel.h"

namespace tiletune::server {
namespace {

// Run the record's baseline instead, because of `reason`.
v1::Fallback BaselineOf(const v1::Record& record, std::string reason) {
  v1::Fallback fallback;
  fallback.set_library(record.baseline_name());
  fallback.set_reason(std::move(reason));
  return fallback;
}

// Why `lookup` serves no tuned kernel, with what to run instead; nullopt for
// a HIT of a tuned record.
std::optional<v1::Fallback> NothingServed(const v1::LookupResponse& lookup) {
  if (lookup.result() != v1::LookupResponse::RESULT_HIT) return lookup.fallback();
  if (lookup.record().winner() == v1::WINNER_TUNED) return std::nullopt;
  return BaselineOf(lookup.record(), "no tuned kernel beat " + lookup.record().baseline_name() +
                                         " on this key (the record is VENDOR): run it");
}

std::optional<std::string> ReadArtifact(const std::string& path, int64_t max_bytes,
                                        std::string* code) {
  std::ifstream in(path, std::ios::binary | std::ios::ate);
  if (!in) return "cannot read the compiled kernel " + path;
  const auto bytes = static_cast<int64_t>(in.tellg());
  if (bytes > max_bytes) {
    return "the compiled kernel has " + std::to_string(bytes) + " bytes; max_artifact_bytes is " +
           std::to_string(max_bytes);
  }
  in.seekg(0);
  code->assign(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
  return std::nullopt;
}

}  // namespace

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
    const auto answer_fallback = [&](v1::Fallback fallback) {
      *head.mutable_fallback() = std::move(fallback);
      writer->Write(head);
      return grpc::Status::OK;
    };
    if (auto fallback = NothingServed(lookup)) return answer_fallback(*fallback);

    const v1::Record& record = lookup.record();
    const ManagedDevice* device = ctx_.devices.FindByClass(record.device_class());
    if (!device) {
      return answer_fallback(BaselineOf(
          record, "no device of class " + record.device_class() +
                      " on this daemon to build the kernel for; ask a daemon that has one"));
    }
    const runtime::CompileLimits limits{
        .timeout_seconds = ctx_.config.tuning.compile_timeout_seconds,
        .niceness = ctx_.config.tuning.compile_niceness};
    auto built = tuner::BuildServedKernel(record, device->info, *device->backend, limits);
    if (auto* why = std::get_if<std::string>(&built)) {
      return answer_fallback(BaselineOf(record, *why));
    }
    const tuner::ServedKernel& kernel = std::get<tuner::ServedKernel>(built);
    std::string code;
    if (auto error =
            ReadArtifact(kernel.compiled.artifact_path, ctx_.config.max_artifact_bytes, &code)) {
      return {grpc::StatusCode::RESOURCE_EXHAUSTED, *error};
    }
    if (call.deadline->Passed()) return call.deadline->Exceeded();
    *head.mutable_artifact() =
        tuner::DescribeArtifact(record, kernel, code, request->include_source());
    if (ctx_.signer) ctx_.signer->Sign(*head.mutable_artifact());
    if (!request->cached_content_hash().empty() &&
        request->cached_content_hash() == head.artifact().content_hash()) {
      head.set_unchanged(true);
      writer->Write(head);
      return grpc::Status::OK;
    }
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
