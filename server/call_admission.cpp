#include "server/call_admission.h"

#include <spdlog/spdlog.h>

namespace tiletune::server {

grpc::Status CallAdmission::Admit(const grpc::ServerContextBase& call, const CallPolicy& policy,
                                  AdmittedCall& admitted) const {
  if (policy.ceiling == CallCeiling::kRequest) {
    admitted.deadline.emplace(call, policy.method, ctx_.config.max_request_seconds,
                              "max_request_seconds");
  } else if (policy.ceiling == CallCeiling::kStream) {
    admitted.deadline.emplace(call, policy.method, ctx_.config.max_stream_seconds,
                              "max_stream_seconds");
  }
  if (!policy.before_ready && !ctx_.ready.load()) {
    return {grpc::StatusCode::UNAVAILABLE, "tiletuned is starting: the database is not open yet"};
  }
  if (!ctx_.authorizer) return grpc::Status::OK;
  return ctx_.authorizer->Admit(call, policy.access, policy.method, admitted.caller);
}

grpc::Status CallAdmission::WithDatabase(const grpc::ServerContextBase& call,
                                         const CallPolicy& policy,
                                         const std::function<grpc::Status()>& body) const {
  grpc::Status status;
  try {
    if (ctx_.database.Attempt([&] {
          status = policy.creates_jobs && ctx_.draining.load()
                       ? grpc::Status(grpc::StatusCode::UNAVAILABLE,
                                      "tiletuned is shutting down and takes no new jobs")
                       : body();
        })) {
      return status;
    }
  } catch (const db::StoreUnwritable& e) {
    // Passing (a full disk, a read-only server): the caller may retry.
    spdlog::warn("request={} peer={} {}: not stored: {}", RequestId(call), call.peer(),
                 policy.method, e.what());
    return {grpc::StatusCode::UNAVAILABLE,
            "the tuning database refuses writes (" + std::string(e.what()) +
                "); nothing was changed, try again once it takes writes (the mutations health "
                "says when)"};
  } catch (const db::StoreError& e) {
    spdlog::error("request={} peer={} {}: storage error: {}", RequestId(call), call.peer(),
                  policy.method, e.what());
    return {grpc::StatusCode::INTERNAL, e.what()};
  }
  return {grpc::StatusCode::UNAVAILABLE,
          "the tuning database is unreachable (" + ctx_.database.why() +
              "); lookups are answered from this daemon's cache, calls that need the database "
              "work again once it is back"};
}

grpc::Status CallAdmission::Unexpected(const grpc::ServerContextBase& call,
                                       const CallPolicy& policy, std::string_view what) const {
  const std::string request = RequestId(call);
  spdlog::error("request={} peer={} {}: unexpected error: {}", request, call.peer(), policy.method,
                what);
  return {grpc::StatusCode::INTERNAL, std::string(policy.method) +
                                          ": internal error, see tiletuned's log" +
                                          (request == "-" ? "" : " for request=" + request)};
}

void CallAdmission::Count(const CallPolicy& policy, const grpc::Status& status,
                          std::chrono::steady_clock::time_point started) const {
  if (const RpcMetrics* rpc = ctx_.metrics.Rpc(policy.method)) {
    rpc->Observe(status.error_code(),
                 std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count());
  }
}

grpc::Status InvalidArgument(const kernels::FieldError& e) {
  return {grpc::StatusCode::INVALID_ARGUMENT, e.ToString()};
}

std::string RequestId(const grpc::ServerContextBase& call) {
  const auto& md = call.client_metadata();
  auto it = md.find("x-request-id");
  return it == md.end() ? "-" : std::string(it->second.data(), it->second.size());
}

}  // namespace tiletune::server
