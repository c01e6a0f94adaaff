#include "server/call_deadline.h"

#include <algorithm>

#include <fmt/format.h>

namespace tiletune::server {

CallDeadline::CallDeadline(const grpc::ServerContextBase& context, std::string_view method,
                           double ceiling_seconds, std::string_view ceiling_setting)
    : method_(method), ceiling_(fmt::format("{}={}", ceiling_setting, ceiling_seconds)) {
  const auto now = std::chrono::system_clock::now();
  // A call without a deadline reports the far future. Compared in double
  // seconds so that neither that nor a huge ceiling overflows.
  const auto client = context.deadline();
  client_first_ = std::chrono::duration<double>(client - now).count() <= ceiling_seconds;
  at_ = client_first_ ? client
                      : now + std::chrono::duration_cast<std::chrono::system_clock::duration>(
                                  std::chrono::duration<double>(ceiling_seconds));
}

std::chrono::milliseconds CallDeadline::Remaining() const {
  const auto left = at_ - std::chrono::system_clock::now();
  return std::max(std::chrono::milliseconds(0), std::chrono::ceil<std::chrono::milliseconds>(left));
}

grpc::Status CallDeadline::Exceeded() const {
  if (client_first_) {
    return {grpc::StatusCode::DEADLINE_EXCEEDED, method_ + ": the client's deadline passed"};
  }
  return {grpc::StatusCode::DEADLINE_EXCEEDED,
          method_ + ": ran past the daemon's limit (" + ceiling_ +
              "); call again with a narrower request or to continue"};
}

}  // namespace tiletune::server
