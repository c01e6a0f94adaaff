#include "server/tls_credentials.h"

#include <grpcpp/security/server_credentials.h>

#include "server/secret_file.h"

namespace tiletune::server {

std::shared_ptr<grpc::ServerCredentials> MakeServerCredentials(const DaemonConfig& config) {
  if (config.tls_cert_file.empty()) return grpc::InsecureServerCredentials();
  grpc::SslServerCredentialsOptions options;
  options.pem_key_cert_pairs.push_back({ReadSecretFile("tls_key_file", config.tls_key_file),
                                        ReadSecretFile("tls_cert_file", config.tls_cert_file)});
  if (config.tls_client_ca_file.empty()) {
    options.client_certificate_request = GRPC_SSL_DONT_REQUEST_CLIENT_CERTIFICATE;
  } else {
    options.pem_root_certs = ReadSecretFile("tls_client_ca_file", config.tls_client_ca_file);
    // Without the requirement a client may still connect without a
    // certificate (and then needs a token for mutating calls); one it does
    // present must verify.
    options.client_certificate_request =
        config.tls_require_client_cert ? GRPC_SSL_REQUEST_AND_REQUIRE_CLIENT_CERTIFICATE_AND_VERIFY
                                       : GRPC_SSL_REQUEST_CLIENT_CERTIFICATE_AND_VERIFY;
  }
  return grpc::SslServerCredentials(options);
}

}  // namespace tiletune::server
