#include "client/channel.h"

#include <cerrno>
#include <cstring>
#include <fstream>
#include <sstream>

#include <grpcpp/create_channel.h>
#include <grpcpp/security/credentials.h>
#include <grpcpp/support/channel_arguments.h>
#include <grpcpp/support/client_interceptor.h>

#include "client/input_error.h"

namespace tiletune::client {
namespace {

std::string ReadFile(const std::string& what, const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw InputError(what + " " + path + ": " + std::strerror(errno));
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

// Adds the bearer token to every call's metadata. An interceptor rather
// than call credentials: gRPC sends call credentials only over TLS, and a
// daemon on a trusted network may take tokens in plaintext.
class BearerTokenInterceptor : public grpc::experimental::Interceptor {
 public:
  explicit BearerTokenInterceptor(std::string header) : header_(std::move(header)) {}

  void Intercept(grpc::experimental::InterceptorBatchMethods* methods) override {
    if (methods->QueryInterceptionHookPoint(
            grpc::experimental::InterceptionHookPoints::PRE_SEND_INITIAL_METADATA)) {
      methods->GetSendInitialMetadata()->insert({"authorization", header_});
    }
    methods->Proceed();
  }

 private:
  std::string header_;
};

class BearerTokenFactory : public grpc::experimental::ClientInterceptorFactoryInterface {
 public:
  explicit BearerTokenFactory(std::string token) : header_("Bearer " + std::move(token)) {}

  grpc::experimental::Interceptor* CreateClientInterceptor(
      grpc::experimental::ClientRpcInfo*) override {
    return new BearerTokenInterceptor(header_);
  }

 private:
  std::string header_;
};

std::shared_ptr<grpc::ChannelCredentials> MakeCredentials(const ChannelOptions& options) {
  if (!options.UsesTls()) return grpc::InsecureChannelCredentials();
  if (options.tls_cert_file.empty() != options.tls_key_file.empty()) {
    throw InputError("a TLS client certificate and its key must be given together");
  }
  grpc::SslCredentialsOptions ssl;
  if (!options.tls_ca_file.empty()) ssl.pem_root_certs = ReadFile("TLS CA", options.tls_ca_file);
  if (!options.tls_cert_file.empty()) {
    ssl.pem_cert_chain = ReadFile("TLS certificate", options.tls_cert_file);
    ssl.pem_private_key = ReadFile("TLS key", options.tls_key_file);
  }
  return grpc::SslCredentials(ssl);
}

}  // namespace

bool ChannelOptions::UsesTls() const {
  return tls || !tls_ca_file.empty() || !tls_cert_file.empty() || !tls_key_file.empty();
}

std::shared_ptr<grpc::Channel> MakeChannel(const std::string& address,
                                           const ChannelOptions& options) {
  grpc::ChannelArguments args;
  args.SetInt(GRPC_ARG_KEEPALIVE_TIME_MS, static_cast<int>(options.keepalive_time.count()));
  args.SetInt(GRPC_ARG_KEEPALIVE_TIMEOUT_MS, static_cast<int>(options.keepalive_timeout.count()));
  args.SetInt(GRPC_ARG_KEEPALIVE_PERMIT_WITHOUT_CALLS, 1);
  args.SetInt(GRPC_ARG_MAX_RECONNECT_BACKOFF_MS,
              static_cast<int>(options.max_reconnect_backoff.count()));
  args.SetMaxReceiveMessageSize(options.max_receive_message_bytes);
  args.SetMaxSendMessageSize(options.max_send_message_bytes);
  auto credentials = MakeCredentials(options);
  if (options.token.empty()) return grpc::CreateCustomChannel(address, credentials, args);
  std::vector<std::unique_ptr<grpc::experimental::ClientInterceptorFactoryInterface>> interceptors;
  interceptors.push_back(std::make_unique<BearerTokenFactory>(options.token));
  return grpc::experimental::CreateCustomChannelWithInterceptors(address, credentials, args,
                                                                 std::move(interceptors));
}

std::string ReadTokenFile(const std::string& path) {
  const std::string text = ReadFile("token file", path);
  const auto first = text.find_first_not_of(" \t\r\n");
  if (first == std::string::npos) throw InputError("token file " + path + " is empty");
  const auto last = text.find_last_not_of(" \t\r\n");
  const std::string token = text.substr(first, last - first + 1);
  if (token.find_first_of(" \t\r\n") != std::string::npos) {
    throw InputError("token file " + path + " must hold one token (it has whitespace inside)");
  }
  return token;
}

}  // namespace tiletune::client
