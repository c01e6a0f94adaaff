#include "server/call_authorizer.h"

#include <algorithm>
#include <optional>
#include <sstream>
#include <stdexcept>

#include <grpcpp/security/auth_context.h>

#include "runtime/content_hash.h"
#include "server/secret_file.h"

namespace tiletune::server {
namespace {

constexpr std::string_view kBearerScheme = "bearer";
constexpr std::string_view kSpaceOrTab = " \t";

// Equal-length digests compared without an early exit, so the time taken
// says nothing about how much of a guess was right.
bool SameDigest(std::string_view a, std::string_view b) {
  if (a.size() != b.size()) return false;
  unsigned char difference = 0;
  for (size_t i = 0; i < a.size(); ++i) difference |= a[i] ^ b[i];
  return difference == 0;
}

bool StartsWithCaseless(std::string_view text, std::string_view prefix) {
  return text.size() >= prefix.size() &&
         std::equal(prefix.begin(), prefix.end(), text.begin(), [](char p, char t) {
           return p == std::tolower(static_cast<unsigned char>(t));
         });
}

// The token of an authorization value "Bearer <token>": the scheme in any
// case, then one or more spaces or tabs (RFC 6750's 1*SP, as common servers
// read it). nullopt when the value is not of that form.
std::optional<std::string_view> BearerToken(std::string_view value) {
  if (!StartsWithCaseless(value, kBearerScheme)) return std::nullopt;
  value.remove_prefix(kBearerScheme.size());
  if (value.empty() || kSpaceOrTab.find(value.front()) == std::string_view::npos) {
    return std::nullopt;
  }
  const auto token = value.find_first_not_of(kSpaceOrTab);
  return token == std::string_view::npos ? std::string_view() : value.substr(token);
}

// "ipv4:10.0.0.7:51234" -> "ipv4:10.0.0.7": one client, many connections.
std::string PeerHost(const std::string& peer) {
  const auto colon = peer.rfind(':');
  const auto first = peer.find(':');
  return colon == std::string::npos || colon == first ? peer : peer.substr(0, colon);
}

}  // namespace

CallAuthorizer::CallAuthorizer(const DaemonConfig& config)
    : enabled_(AuthEnabled(config)),
      open_reads_(config.auth_open_reads),
      writers_(config.auth_writers) {
  if (config.auth_tokens_file.empty()) return;
  std::istringstream lines(ReadSecretFile("auth_tokens_file", config.auth_tokens_file));
  std::string line;
  for (int number = 1; std::getline(lines, line); ++number) {
    std::istringstream fields(line);
    std::string name, token, extra;
    if (!(fields >> name) || name[0] == '#') continue;
    const auto where =
        "auth_tokens_file " + config.auth_tokens_file + ": line " + std::to_string(number) + ": ";
    if (!(fields >> token) || (fields >> extra)) {
      throw std::runtime_error(where + "expected 'NAME TOKEN'");
    }
    Token entry{name, runtime::ContentHash(token)};
    for (const auto& t : tokens_) {
      if (t.name == entry.name) throw std::runtime_error(where + "name '" + name + "' repeated");
      if (t.digest == entry.digest) throw std::runtime_error(where + "token repeated");
    }
    tokens_.push_back(std::move(entry));
  }
  if (tokens_.empty()) throw std::runtime_error("auth_tokens_file: no 'NAME TOKEN' line");
}

const CallAuthorizer::Token* CallAuthorizer::FindToken(std::string_view presented) const {
  const std::string digest = runtime::ContentHash(presented);
  const Token* found = nullptr;
  for (const auto& t : tokens_) {
    if (SameDigest(digest, t.digest)) found = &t;
  }
  return found;
}

grpc::Status CallAuthorizer::Identify(const grpc::ServerContextBase& context,
                                      Caller& caller) const {
  caller = {PeerHost(context.peer()), false};
  if (!enabled_) return grpc::Status::OK;
  const auto& metadata = context.client_metadata();
  if (auto it = metadata.find("authorization"); it != metadata.end()) {
    const auto presented = BearerToken({it->second.data(), it->second.size()});
    if (!presented) {
      return {grpc::StatusCode::UNAUTHENTICATED,
              "authorization: expected 'Bearer <token>' (other schemes are not accepted)"};
    }
    if (tokens_.empty()) {
      return {grpc::StatusCode::UNAUTHENTICATED,
              "authorization: this daemon accepts no bearer tokens (auth_tokens_file is unset); "
              "use a client certificate"};
    }
    const Token* token = FindToken(*presented);
    if (!token) {
      return {grpc::StatusCode::UNAUTHENTICATED, "authorization: the bearer token is not valid"};
    }
    caller = {token->name, true};
    return grpc::Status::OK;
  }
  // gRPC has verified the certificate against tls_client_ca_file.
  const auto auth = context.auth_context();
  if (auth && auth->IsPeerAuthenticated()) {
    const auto names = auth->FindPropertyValues("x509_common_name");
    if (!names.empty()) caller = {std::string(names.front().data(), names.front().size()), true};
  }
  return grpc::Status::OK;
}

grpc::Status CallAuthorizer::Admit(const grpc::ServerContextBase& context, Access access,
                                   std::string_view method, Caller& caller) const {
  // Open reads ask nobody who they are: lookups stay as cheap as without auth.
  if (access == Access::kRead && (!enabled_ || open_reads_)) return grpc::Status::OK;
  if (auto status = Identify(context, caller); !status.ok()) return status;
  if (!enabled_) return grpc::Status::OK;
  if (!caller.authenticated) {
    return {grpc::StatusCode::UNAUTHENTICATED,
            std::string(method) +
                " needs a credential: 'authorization: Bearer <token>' metadata or a client "
                "certificate"};
  }
  if (access == Access::kMutate && !writers_.empty() &&
      std::find(writers_.begin(), writers_.end(), caller.identity) == writers_.end()) {
    return {grpc::StatusCode::PERMISSION_DENIED,
            std::string(method) + ": '" + caller.identity +
                "' is authenticated but not allowed to change anything (auth_writers)"};
  }
  return grpc::Status::OK;
}

}  // namespace tiletune::server
