#pragma once

#include <memory>

#include <grpcpp/security/server_credentials.h>

#include "server/daemon_config.h"

namespace tiletune::server {

// The gRPC port's credentials: plaintext without tls_cert_file, TLS with it,
// and client certificates checked against tls_client_ca_file when set.
// Throws std::runtime_error naming the setting whose file cannot be read.
std::shared_ptr<grpc::ServerCredentials> MakeServerCredentials(const DaemonConfig& config);

}  // namespace tiletune::server
