#pragma once

#include <chrono>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <utility>

#include <grpcpp/server_context.h>
#include <grpcpp/support/status.h>

#include "kernels/core/kernel_key.h"
#include "server/call_authorizer.h"
#include "server/call_deadline.h"
#include "server/service_context.h"

namespace tiletune::server {

// The one gate every RPC of TuningService passes before its body runs, and
// the statuses the RPC files share. In order: the call's deadline is fixed
// against the daemon's ceiling for its kind; the daemon must be ready (the
// database open); the caller must be allowed (CallAuthorizer); a call that
// needs the database is refused at once while it is known to be
// unreachable, answers UNAVAILABLE when it turns out to be or refuses a
// write and INTERNAL on another storage failure, and a call that creates
// jobs is refused while the daemon drains. Any other exception out of a body
// answers INTERNAL and is logged with the method and request id. Each RPC
// states what it needs as a CallPolicy.

// Which of the daemon's ceilings bounds a call (see CallDeadline).
enum class CallCeiling {
  kNone,
  kRequest,  // max_request_seconds: unary calls whose work grows with the request
  kStream,   // max_stream_seconds: server streams
};

struct CallPolicy {
  std::string_view method;
  Access access = Access::kRead;
  CallCeiling ceiling = CallCeiling::kNone;
  bool before_ready = false;    // answers before the database is open
  bool needs_database = false;  // the body runs with the database (see above)
  bool creates_jobs = false;    // needs the database, and is refused while the daemon drains
};

// What an admitted call knows of itself.
struct AdmittedCall {
  Caller caller;  // set for mutating and closed calls (CallAuthorizer::Admit)
  std::optional<CallDeadline> deadline;  // set when the policy has a ceiling
};

class CallAdmission {
 public:
  explicit CallAdmission(const ServiceContext& context) : ctx_(context) {}

  // Runs `body` (grpc::Status(const AdmittedCall&)) if `policy` admits the
  // call; otherwise returns the refusal. Either way the call is counted and
  // timed under its method and status code.
  template <typename Body>
  grpc::Status Run(const grpc::ServerContextBase& call, const CallPolicy& policy,
                   Body&& body) const {
    const auto started = std::chrono::steady_clock::now();
    grpc::Status status = Gate(call, policy, body);
    Count(policy, status, started);
    return status;
  }

  // For a call that outlives one body (LookupStream): Admit when it starts,
  // Count with its final status when it ends.
  grpc::Status Admit(const grpc::ServerContextBase& call, const CallPolicy& policy,
                     AdmittedCall& admitted) const;
  void Count(const CallPolicy& policy, const grpc::Status& status,
             std::chrono::steady_clock::time_point started) const;

 private:
  template <typename Body>
  grpc::Status Gate(const grpc::ServerContextBase& call, const CallPolicy& policy,
                    Body& body) const {
    // Left to gRPC, an exception would become a bare UNKNOWN, logged nowhere.
    try {
      AdmittedCall admitted;
      if (auto s = Admit(call, policy, admitted); !s.ok()) return s;
      if (!policy.needs_database && !policy.creates_jobs) return body(std::as_const(admitted));
      return WithDatabase(call, policy, [&] { return body(std::as_const(admitted)); });
    } catch (const std::exception& e) {
      return Unexpected(call, policy, e.what());
    } catch (...) {
      return Unexpected(call, policy, "an exception that is not a std::exception");
    }
  }

  grpc::Status WithDatabase(const grpc::ServerContextBase& call, const CallPolicy& policy,
                            const std::function<grpc::Status()>& body) const;
  // Logs `what` and answers INTERNAL without it: it may describe internals.
  grpc::Status Unexpected(const grpc::ServerContextBase& call, const CallPolicy& policy,
                          std::string_view what) const;
  const ServiceContext& ctx_;
};

grpc::Status InvalidArgument(const kernels::FieldError& e);

// The request id a client sent (x-request-id), for logs; "-" when none.
std::string RequestId(const grpc::ServerContextBase& call);

}  // namespace tiletune::server
