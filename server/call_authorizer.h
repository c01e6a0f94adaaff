#pragma once

#include <string>
#include <string_view>
#include <vector>

#include <grpcpp/server_context.h>
#include <grpcpp/support/status.h>

#include "server/daemon_config.h"

namespace tiletune::server {

// What a call does: reads stay open on a trusted network (auth_open_reads),
// mutations need a credential whenever auth is on.
enum class Access { kRead, kMutate };

struct Caller {
  // The token's name, the client certificate's CN, or (unauthenticated) the
  // peer's address without its port.
  std::string identity;
  bool authenticated = false;
};

// Decides who is calling and whether they may. A missing or unknown
// credential is UNAUTHENTICATED; a known identity outside auth_writers is
// PERMISSION_DENIED. Tokens are kept only as SHA-256 digests and compared in
// constant time; no token text is ever logged or put into a status.
class CallAuthorizer {
 public:
  // Reads auth_tokens_file; throws std::runtime_error naming the setting and
  // line of a malformed entry.
  explicit CallAuthorizer(const DaemonConfig& config);

  // Returns OK, or the refusal of `method`. Sets `caller` for mutating and
  // closed calls (open reads leave it empty).
  grpc::Status Admit(const grpc::ServerContextBase& context, Access access, std::string_view method,
                     Caller& caller) const;

  bool enabled() const { return enabled_; }
  size_t token_count() const { return tokens_.size(); }

 private:
  struct Token {
    std::string name;
    std::string digest;
  };
  grpc::Status Identify(const grpc::ServerContextBase& context, Caller& caller) const;
  const Token* FindToken(std::string_view presented) const;

  bool enabled_;
  bool open_reads_;
  std::vector<std::string> writers_;
  std::vector<Token> tokens_;
};

}  // namespace tiletune::server
