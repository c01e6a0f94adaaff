#pragma once

#include <chrono>
#include <string>
#include <string_view>

#include <grpcpp/server_context.h>
#include <grpcpp/support/status.h>

namespace tiletune::server {

// When a call must end: the client's deadline, bounded by the daemon's
// ceiling for its kind of call (max_request_seconds for the unary calls
// whose work grows with the request, max_stream_seconds for server
// streams), so that a client with no deadline or a distant one cannot hold
// a handler thread for ever. gRPC cancels a call at the client's deadline
// but knows nothing of ours; long handlers ask Passed() between steps.
class CallDeadline {
 public:
  // `ceiling_setting` names the config value, for the status message.
  CallDeadline(const grpc::ServerContextBase& context, std::string_view method,
               double ceiling_seconds, std::string_view ceiling_setting);

  bool Passed() const { return std::chrono::system_clock::now() >= at_; }
  // Time left, zero once passed.
  std::chrono::milliseconds Remaining() const;
  // DEADLINE_EXCEEDED naming the method and which bound ended it.
  grpc::Status Exceeded() const;

 private:
  std::string method_;
  std::string ceiling_;  // "setting=value"
  bool client_first_;    // whether the client's deadline comes before the ceiling
  std::chrono::system_clock::time_point at_;
};

}  // namespace tiletune::server
